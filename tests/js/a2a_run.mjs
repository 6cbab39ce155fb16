// Talks to a served agent with the official A2A JavaScript SDK (@a2a-js/sdk) and prints
// one JSON object: what each step got back, or the error that ended it.
//   node a2a_run.mjs BASE_URL   (API key in HOLODECK_KEY; the agent has a tool
//   `wait_here` that waits until released, so that a task stays working to be cancelled)
// Steps: the card, read without the key; a call without the key; a blocking send; a
// streamed send; getTask; a send that returns at once, then cancelTask; an unknown task.
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from "@a2a-js/sdk/client";

const [url] = process.argv.slice(2);
const key = process.env.HOLODECK_KEY ?? "";
const out = {};

function clientFactory(fetchImpl) {
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
}

function message(text, extra = {}) {
  return {
    messageId: `m-${Math.random().toString(16).slice(2)}`,
    role: 1, // ROLE_USER
    parts: [{ content: { $case: "text", value: text } }],
    ...extra,
  };
}

function failure(error) {
  // a JSON-RPC error keeps the code the server answered as envelopeCode
  const code = error?.envelopeCode ?? null;
  return { name: error?.name, message: String(error?.message ?? error), code };
}

function text(task) {
  return task.artifacts?.[0]?.parts?.[0]?.content?.value ?? null;
}

async function step(name, run) {
  try {
    out[name] = await run();
  } catch (error) {
    out[name] = { error: failure(error) };
  }
}

// the card is public: read with no key at all
const card = await new DefaultAgentCardResolver().resolve(url);
out.card = {
  name: card.name,
  streaming: card.capabilities?.streaming ?? null,
  schemes: Object.keys(card.securitySchemes ?? {}),
  url: card.supportedInterfaces?.[0]?.url ?? null,
};

const anonymous = await clientFactory(fetch).createFromAgentCard(card);
await step("without_key", async () => {
  const answer = await anonymous.sendMessage({ message: message("hello") });
  return { kind: answer.status ? "task" : "message" };
});

const auth = {
  headers: async () => ({ Authorization: `Bearer ${key}` }),
  shouldRetryWithHeaders: async () => undefined,
};
const client = await clientFactory(createAuthenticatingFetchWithRetry(fetch, auth)).createFromAgentCard(card);

let blocking;
await step("blocking", async () => {
  blocking = await client.sendMessage({ message: message("hello") });
  return {
    id: blocking.id,
    contextId: blocking.contextId,
    state: blocking.status?.state,
    answer: text(blocking),
  };
});

await step("streaming", async () => {
  const events = [];
  let answer = "";
  const sent = message("and again", { contextId: blocking?.contextId ?? "" });
  for await (const event of client.sendMessageStream({ message: sent })) {
    const { $case, value } = event.payload ?? {};
    events.push({ kind: $case, state: value?.status?.state ?? null });
    if ($case === "artifactUpdate") answer += value.artifact?.parts?.[0]?.content?.value ?? "";
  }
  return { events, answer };
});

await step("get", async () => {
  const task = await client.getTask({ id: blocking.id, historyLength: 1 });
  return { id: task.id, state: task.status?.state, history: task.history.length };
});

await step("cancel", async () => {
  const working = await client.sendMessage({
    message: message("/call wait_here", { contextId: blocking?.contextId ?? "" }),
    configuration: { returnImmediately: true, acceptedOutputModes: [] },
  });
  const cancelled = await client.cancelTask({ id: working.id });
  const read = await client.getTask({ id: working.id });
  return {
    started: working.status?.state,
    cancelled: cancelled.status?.state,
    read: read.status?.state,
  };
});

await step("unknown", async () => {
  const task = await client.getTask({ id: "no-such-task" });
  return { state: task.status?.state };
});

console.log(JSON.stringify(out));

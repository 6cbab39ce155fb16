// Runs one AG-UI run per message with the official client (@ag-ui/client's HttpAgent)
// against URL, on one thread, and prints a JSON line per run: the events received, the
// messages the client built from them, the run's result, or the error that ended it.
//   node agui_run.mjs URL THREAD_ID MESSAGE [MESSAGE...]   (API key in HOLODECK_KEY;
//   each run's `context` entries, as JSON, in AGUI_CONTEXT; the page's tools, as JSON,
//   in AGUI_TOOLS; the page's state to start with, as JSON, in AGUI_STATE). A MESSAGE "tool:RESULT" answers each tool call of the last run,
//   as the page does once it has run them, instead of adding a user message. A MESSAGE
//   "resume:PAYLOAD" answers each interrupt the last run ended with (PAYLOAD, as JSON,
//   is each answer's payload; "resume:cancel" cancels them), through the client's
//   buildResumeArray, instead of adding a user message.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";

const [url, threadId, ...messages] = process.argv.slice(2);
const headers = process.env.HOLODECK_KEY
  ? { Authorization: `Bearer ${process.env.HOLODECK_KEY}` }
  : {};
const initialState = JSON.parse(process.env.AGUI_STATE || "{}");
const agent = new HttpAgent({ url, threadId, headers, initialState });
const context = JSON.parse(process.env.AGUI_CONTEXT || "[]");
const tools = JSON.parse(process.env.AGUI_TOOLS || "[]");

for (const [index, content] of messages.entries()) {
  let resume;
  if (content.startsWith("resume:")) {
    const answer =
      content === "resume:cancel"
        ? { status: "cancelled" }
        : { status: "resolved", payload: JSON.parse(content.slice(7)) };
    const answers = Object.fromEntries(agent.pendingInterrupts.map((i) => [i.id, answer]));
    resume = buildResumeArray(agent.pendingInterrupts, answers);
  } else if (content.startsWith("tool:")) {
    const last = agent.messages.at(-1);
    for (const call of last?.toolCalls ?? []) {
      agent.addMessage({
        id: `tool-${index}-${call.id}`,
        role: "tool",
        toolCallId: call.id,
        content: content.slice(5),
      });
    }
  } else {
    agent.addMessage({ id: `user-${index}`, role: "user", content });
  }
  const events = [];
  let outcome;
  try {
    const { result, newMessages } = await agent.runAgent(
      { runId: `run-${index}`, context, tools, resume },
      { onEvent: ({ event }) => void events.push(event) },
    );
    outcome = { result: result ?? null, newMessages };
  } catch (error) {
    outcome = { error: String(error?.message ?? error) };
  }
  const interrupts = agent.pendingInterrupts;
  console.log(
    JSON.stringify({ events, state: agent.state, messages: agent.messages, interrupts, ...outcome }),
  );
}

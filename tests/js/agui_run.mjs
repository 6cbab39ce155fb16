// Runs one AG-UI run per message with the official client (@ag-ui/client's HttpAgent)
// against URL, on one thread, and prints a JSON line per run: the events received, the
// messages the client built from them, the run's result, or the error that ended it.
//   node agui_run.mjs URL THREAD_ID MESSAGE [MESSAGE...]   (API key in HOLODECK_KEY;
//   each run's `context` entries, as JSON, in AGUI_CONTEXT)
import { HttpAgent } from "@ag-ui/client";

const [url, threadId, ...messages] = process.argv.slice(2);
const headers = process.env.HOLODECK_KEY
  ? { Authorization: `Bearer ${process.env.HOLODECK_KEY}` }
  : {};
const agent = new HttpAgent({ url, threadId, headers });
const context = JSON.parse(process.env.AGUI_CONTEXT || "[]");

for (const [index, content] of messages.entries()) {
  agent.addMessage({ id: `user-${index}`, role: "user", content });
  const events = [];
  let outcome;
  try {
    const { result, newMessages } = await agent.runAgent(
      { runId: `run-${index}`, context },
      { onEvent: ({ event }) => void events.push(event) },
    );
    outcome = { result: result ?? null, newMessages };
  } catch (error) {
    outcome = { error: String(error?.message ?? error) };
  }
  console.log(JSON.stringify({ events, state: agent.state, messages: agent.messages, ...outcome }));
}

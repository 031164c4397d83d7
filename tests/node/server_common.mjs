// Shared helpers of the niwa-engine server tests (run by tests/server/*.cpp with NIWA_URL set):
// the real OpenAI client pointed at the server, raw SSE reading, and checks that fail loudly.
import assert from "node:assert/strict";
import OpenAI from "openai";

export const url = process.env.NIWA_URL;
if (!url) {
  console.error("NIWA_URL is not set");
  process.exit(2);
}
export const model = process.env.NIWA_MODEL ?? "bonsai-27b";
export const key = process.env.NIWA_KEY ?? "none";

export function client(apiKey = key) {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0, timeout: 120000 });
}

export { assert };

// Runs the named async checks in order; the first failure ends the script with exit code 1.
export async function run(checks) {
  for (const [name, fn] of checks) {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      console.log(`FAIL ${name}: ${e?.stack ?? e}`);
      process.exit(1);
    }
  }
}

// POST with fetch: {status, headers, json, text}.
export async function post(path, body, { apiKey = key, raw = false } = {}) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
    body: raw ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, json, text };
}

export async function get(path, apiKey = key) {
  const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${apiKey}` } });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

// An OpenAI error object with this status, and a message that matches `pattern`.
export function assertError(r, status, pattern, param) {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
  assert.ok(r.json?.error, `no error object: ${r.text}`);
  const e = r.json.error;
  assert.equal(typeof e.message, "string");
  assert.equal(typeof e.type, "string");
  assert.ok("param" in e && "code" in e, `error lacks param/code: ${r.text}`);
  if (pattern) assert.match(e.message, pattern);
  if (param !== undefined) assert.equal(e.param, param);
}

// Reads a streamed response's raw SSE events (data lines only, comments skipped).
export async function sseEvents(path, body, apiKey = key) {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  if (res.status !== 200) assert.fail(`stream answered ${res.status}: ${await res.text()}`);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const text = await res.text();
  const events = [];
  for (const block of text.split("\n\n")) {
    if (!block) continue;
    const lines = block.split("\n").filter((l) => !l.startsWith(":"));
    if (lines.length === 0) continue;
    assert.equal(lines.length, 1, `an event of more than one line: ${JSON.stringify(block)}`);
    assert.ok(lines[0].startsWith("data: "), `not a data line: ${JSON.stringify(lines[0])}`);
    events.push(lines[0].slice(6));
  }
  assert.ok(text.endsWith("data: [DONE]\n\n"), "the stream does not end with data: [DONE]");
  return events;
}

// Checks a chat stream's chunks (as the client parsed them) and joins them into one message.
export function joinChatChunks(chunks, { includeUsage = false } = {}) {
  assert.ok(chunks.length >= 2, "too few chunks");
  const id = chunks[0].id;
  assert.match(id, /^chatcmpl-/);
  let content = "", reasoning = "", finish = null, finishes = 0, usage = null, role = null;
  const calls = [];
  const logprobs = [];
  for (const [i, c] of chunks.entries()) {
    assert.equal(c.id, id, "chunk ids differ");
    assert.equal(c.object, "chat.completion.chunk");
    assert.equal(c.model, model);
    assert.equal(typeof c.created, "number");
    if (c.usage) usage = c.usage;
    if (c.choices.length === 0) {
      assert.ok(includeUsage && i === chunks.length - 1, "a chunk without choices that is not the final usage chunk");
      continue;
    }
    assert.equal(finish, null, "a chunk after the one with finish_reason");
    assert.equal(c.choices.length, 1);
    const ch = c.choices[0];
    assert.equal(ch.index, 0);
    if (i === 0) role = ch.delta.role;
    else assert.ok(ch.delta.role === undefined, "role after the first chunk");
    if (ch.delta.content) content += ch.delta.content;
    if (ch.delta.reasoning_content) reasoning += ch.delta.reasoning_content;
    for (const tc of ch.delta.tool_calls ?? []) {
      if (tc.id) calls[tc.index] = { id: tc.id, name: tc.function.name, arguments: tc.function.arguments ?? "" };
      else calls[tc.index].arguments += tc.function.arguments;
    }
    if (ch.logprobs?.content) logprobs.push(...ch.logprobs.content);
    if (ch.finish_reason !== null) {
      finish = ch.finish_reason;
      finishes++;
    }
  }
  assert.equal(role, "assistant", "the first chunk carries no role");
  assert.equal(finishes, 1, "not exactly one finish_reason");
  if (includeUsage) assert.ok(usage, "no usage chunk");
  return { id, content, reasoning, finish, usage, calls, logprobs };
}

export function assertUsage(u, maxCompletion) {
  assert.ok(Number.isInteger(u.prompt_tokens) && u.prompt_tokens > 0);
  assert.ok(Number.isInteger(u.completion_tokens) && u.completion_tokens >= 0);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
  if (maxCompletion !== undefined) assert.ok(u.completion_tokens <= maxCompletion);
}

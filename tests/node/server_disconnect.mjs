// A client that goes away mid-stream frees its seat at once: the engine's running count goes
// back to 0 long before the request could have finished, and /metrics counts an abort.
import { assert, get, model, run, url, key } from "./server_common.mjs";

async function aborts() {
  const m = (await get("/metrics")).text.match(/^niwa:request_success_total\{[^}]*finished_reason="abort"\} (\S+)$/m);
  assert.ok(m, "no abort counter in /metrics");
  return Number(m[1]);
}

await run([
  ["a dropped stream is cancelled", async () => {
    const before = await aborts();
    const ac = new AbortController();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "Go on forever." }], max_tokens: 100000, stream: true, temperature: 0, seed: 3,
        chat_template_kwargs: { enable_thinking: false } }),
      signal: ac.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    let received = "";
    // Read until two content events have arrived: the request is running.
    for (let i = 0; i < 1000 && (received.match(/"content"/g) ?? []).length < 3; i++) {
      const { value, done } = await reader.read();
      if (done) break;
      received += new TextDecoder().decode(value);
    }
    assert.ok(!received.includes("[DONE]"), "the stream ended before the client dropped it");
    let stats = (await get("/v1/engine/stats")).json;
    assert.equal(stats.requests.running + stats.requests.waiting, 1);
    ac.abort();
    for (let i = 0; i < 200; i++) {
      stats = (await get("/v1/engine/stats")).json;
      if (stats.requests.running === 0 && stats.requests.waiting === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(stats.requests.running, 0, "the seat was not freed after the client went away");
    assert.equal(stats.requests.waiting, 0);
    for (let i = 0; i < 100 && (await aborts()) === before; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await aborts(), before + 1, "the request was not counted as aborted");
  }],
]);

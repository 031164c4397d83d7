// API keys: missing or wrong keys get 401 in OpenAI's shape; a key with max_concurrent 1 gets
// 429 with Retry-After for a second request in flight. Keys: NIWA_KEY (no limit) and
// NIWA_SOLO_KEY (max_concurrent 1).
import OpenAI from "openai";
import { assert, assertError, client, model, run, url } from "./server_common.mjs";

const solo = process.env.NIWA_SOLO_KEY;
const good = { model, messages: [{ role: "user", content: "Hi" }], max_tokens: 2 };

async function postWith(headers, body = good) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, json, text };
}

await run([
  ["no key: 401", async () => assertError(await postWith({}), 401, /missing API key/)],
  ["a wrong key: 401", async () => assertError(await postWith({ Authorization: "Bearer sk-wrong" }), 401, /incorrect API key/)],
  ["not a Bearer header: 401", async () => assertError(await postWith({ Authorization: "Basic abc" }), 401, /Bearer/)],
  ["the OpenAI client with a wrong key raises AuthenticationError", async () => {
    await assert.rejects(client("sk-wrong").chat.completions.create(good), OpenAI.AuthenticationError);
    await assert.rejects(client("sk-wrong").models.list(), OpenAI.AuthenticationError);
  }],
  ["a good key is served", async () => {
    const r = await client().chat.completions.create(good);
    assert.equal(r.object, "chat.completion");
  }],
  ["/health needs no key", async () => assert.equal((await fetch(`${url}/health`)).status, 200)],
  ["a key over its max_concurrent gets 429 with Retry-After", async () => {
    const ac = new AbortController();
    const first = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${solo}` },
      body: JSON.stringify({ ...good, max_tokens: 2000, stream: true }),
      signal: ac.signal,
    });
    assert.equal(first.status, 200);
    const reader = first.body.getReader();
    await reader.read();
    const second = await postWith({ Authorization: `Bearer ${solo}` });
    assertError(second, 429, /already has 1 requests in flight/);
    assert.ok(Number(second.headers.get("retry-after")) >= 1);
    ac.abort();
    // Once the first is gone the key is served again (bounded retries: the server notices the
    // dropped stream at its next write).
    let r;
    for (let i = 0; i < 100; i++) {
      r = await postWith({ Authorization: `Bearer ${solo}` });
      if (r.status === 200) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(r.status, 200, r.text);
  }],
]);

// Written for Niwa; any resemblance to real documents is by topic only. The text changes the
// synthetic vocabulary (and so every synthetic model), so edit it only on purpose.
#include "engine/model/synthetic_corpus.h"

namespace niwa::model {

std::string_view synthetic_corpus() {
    static constexpr std::string_view kCorpus = R"CORPUS(
The office opens at nine. Before the first meeting, the server in the corner has already
loaded the model, warmed its caches and answered a few questions from the night shift.
Nobody thinks about it much, which is the point: a tool that works is a tool you forget.
When the accountant asks for a summary of last quarter's invoices, the answer arrives in a
few seconds. When the designer asks for ten names for a new product, she gets twelve, and
two of them are good. The engineers ask harder questions. They paste stack traces, long
functions and error messages, and they expect the model to read all of it carefully.
It's not magic. The weights are ternary: every value is minus one, zero or plus one, times
a small scale shared by a block of one hundred and twenty-eight weights. That is why a
model with twenty-seven billion parameters fits on two consumer graphics cards, and why it
can serve a whole team at once. We've measured the throughput many times; it's steady.
Requests wait in a queue, the scheduler picks a batch, and the tokens stream back to each
user as they are generated. If a request has a higher priority, it runs first. If memory
runs low, a waiting request is paused and resumed later, and nothing is lost.
Good software is boring in the best sense. It starts when you ask it to start, stops when
you ask it to stop, and tells you clearly what went wrong when something does go wrong.
"The model file ends at byte 7206168928, but the tensor needs more" is a useful message.
"Error 17" is not. We'll keep writing messages that say what happened, where, and what to do.
Questions people asked this week: How do I reset my password? What is the deadline for the
travel report? Can you translate this letter into English? Why does the build fail on my
machine but not on yours? Which of these three contracts has the shortest notice period?
Please write a polite reply that declines the invitation but keeps the door open.

会議は午前十時から始まります。資料は前日までに共有フォルダに置いてください。
このサーバーは社内のネットワークだけで動いていて、外部にデータを送ることはありません。
質問を入力すると、モデルが少しずつ答えを書いていきます。長い文章の要約、メールの下書き、
表の整理、プログラムの説明など、いろいろな仕事に使えます。ただし、答えが正しいかどうかは
必ず自分で確かめてください。特に数字や日付、人の名前には注意が必要です。
東京の本社と大阪の支店では、同じサーバーを使っています。朝は利用者が多いので、
少し待つことがあります。待ち時間が長いときは、管理者に連絡してください。
日本語と英語のどちらでも質問できます。「この文章を英語に翻訳してください」と頼めば、
すぐに翻訳してくれます。カタカナの言葉、たとえばコンピューター、ソフトウェア、
ネットワーク、データベース、プログラム、メール、カレンダーなども問題なく扱えます。
今日は天気が良いので、昼休みに公園を散歩しました。桜の季節はもう終わりましたが、
新しい緑がとてもきれいでした。午後は報告書を書いて、明日の準備をします。
先週の売上は前の週より少し増えました。来月の計画について、部長と相談する予定です。
私たちは小さな会社ですが、道具を大切にしています。良い道具は、仕事を静かに支えます。

def mean(values):
    """Return the arithmetic mean of a non-empty list of numbers."""
    if not values:
        raise ValueError("mean() needs at least one value")
    return sum(values) / len(values)

def tokens_per_second(n_tokens, seconds):
    return n_tokens / seconds if seconds > 0 else 0.0

for i in range(10):
    print(f"step {i}: loss = {1.0 / (i + 1):.4f}")

#include <cstdint>
#include <vector>

// Sums a vector of integers; returns 0 for an empty vector.
int64_t sum(const std::vector<int32_t>& values) {
    int64_t total = 0;
    for (int32_t v : values) total += v;
    return total;
}

struct Request {
    int64_t id = 0;
    int priority = 0;
    std::vector<int32_t> tokens;
    bool finished = false;
};

static bool runs_before(const Request& a, const Request& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.id < b.id;
}

const config = { host: "0.0.0.0", port: 8080, maxTokens: 4096, temperature: 1.0 };
async function ask(question) {
    const response = await fetch(`http://localhost:${config.port}/v1/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model: "bonsai", messages: [{ role: "user", content: question }] }),
    });
    return (await response.json()).choices[0].message.content;
}

SELECT name, COUNT(*) AS orders FROM customers JOIN orders ON orders.customer_id = customers.id
WHERE orders.created_at >= '2024-01-01' GROUP BY name ORDER BY orders DESC LIMIT 20;

Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 256 1024 4096 65536 262144 3.14159 2.71828 -1 +1
Dates: 2024-04-01, 2025-12-31, 令和6年4月1日, 12:30, 09:05:59. Prices: $19.99, ¥1,980, €45.
Percentages: 12.5%, 99.9%, 0.01%. Sizes: 7.2 GB, 5.9 GB, 128 MiB, 24 GB of VRAM.
Version 1.2.3; build 4567; port 8080; room 305; the answer is 42; 3 + 4 = 7; 6 * 7 = 42.

She said, "Let's meet at the station." He replied, "I'd like that, but I'm late already."
They're sure it'll rain; you'll see. The cat's bowl is empty -- again!!! Really???
Lists: apples, oranges, pears; red, green, blue; first, second, third... (and so on).
Paths and URLs: /usr/local/bin, C:\Users\niwa\Documents, https://example.com/docs?page=2#top
Markdown: # Title, ## Section, **bold**, *italic*, `code`, - item, 1. item, > quote.
)CORPUS";
    return kCorpus;
}

}  // namespace niwa::model

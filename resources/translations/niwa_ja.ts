<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja_JP">
<context>
    <name>ApiKeyDialog</name>
    <message>
        <location filename="../../gui/app/qml/ApiKeyDialog.qml" line="+10" />
        <source>Your office API key</source>
        <translation>オフィス用 API キー</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Done</source>
        <translation>完了</translation>
    </message>
    <message>
        <location line="+12" />
        <source>Give this key to the people and programs that use Niwa from other PCs. It is shown only now: copy it before you close this window.</source>
        <translation>ほかの PC から Niwa を使う人やプログラムにこのキーを渡してください。キーが表示されるのは今回だけです。このウィンドウを閉じる前にコピーしてください。</translation>
    </message>
    <message>
        <location line="+10" />
        <source>Copy</source>
        <translation>コピー</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Copied to the clipboard.</source>
        <translation>クリップボードにコピーしました。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Clients use base URL %1 and send the key as a Bearer token.</source>
        <translation>クライアントにはベース URL %1 を設定し、キーを Bearer トークンとして送ってください。</translation>
    </message>
</context>
<context>
    <name>AppController</name>
    <message>
        <location filename="../../gui/app/app_controller.cpp" line="+243" />
        <source>Fix the highlighted settings first.</source>
        <translation>先に赤く表示された設定を直してください。</translation>
    </message>
    <message>
        <location line="+8" />
        <source>LAN serving needs an API key; serving on this PC only.</source>
        <translation>LAN 公開には API キーが必要です。この PC だけで提供します。</translation>
    </message>
    <message>
        <location line="+52" />
        <source>Wait for the reply to finish, or stop it.</source>
        <translation>応答が終わるまで待つか、停止してください。</translation>
    </message>
    <message>
        <location line="+26" />
        <source>Start the engine first (Engine page).</source>
        <translation>先にエンジンを起動してください（エンジン画面）。</translation>
    </message>
    <message>
        <location line="+28" />
        <source>%1 is not an image.</source>
        <translation>%1 は画像ではありません。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>%1 is larger than 20 MB.</source>
        <translation>%1 は 20 MB を超えています。</translation>
    </message>
    <message>
        <location line="+79" />
        <source>LAN serving is off: Windows needs administrator permission to open the engine's port to the LAN.</source>
        <translation>LAN 公開をオフにしました。エンジンのポートを LAN に開くには Windows の管理者権限が必要です。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>LAN serving is off: the engine's port could not be opened to the LAN (%1).</source>
        <translation>LAN 公開をオフにしました。エンジンのポートを LAN に開けませんでした（%1）。</translation>
    </message>
    <message>
        <location line="+5" />
        <source>The engine serves this PC only, but the LAN port forward and firewall rule stay in Windows: removing them needs administrator permission.</source>
        <translation>エンジンはこの PC だけで提供していますが、LAN 用のポート転送とファイアウォール規則は Windows に残っています。削除するには管理者権限が必要です。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>The engine serves this PC only, but the LAN port forward and firewall rule could not be removed (%1).</source>
        <translation>エンジンはこの PC だけで提供していますが、LAN 用のポート転送とファイアウォール規則を削除できませんでした（%1）。</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Other PCs may not reach the engine: the LAN port forward could not be updated to WSL's new address (%1).</source>
        <translation>ほかの PC からエンジンに接続できないおそれがあります。LAN 用のポート転送を WSL の新しいアドレスに更新できませんでした（%1）。</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <location filename="../../gui/app/qml/ChatPage.qml" line="+38" />
        <source>Search chats</source>
        <translation>チャットを検索</translation>
    </message>
    <message>
        <location line="+7" />
        <source>New chat (Ctrl+N)</source>
        <translation>新しいチャット (Ctrl+N)</translation>
    </message>
    <message>
        <location line="+23" />
        <location line="+40" />
        <source>New chat</source>
        <translation>新しいチャット</translation>
    </message>
    <message>
        <location line="-34" />
        <source>Delete chat</source>
        <translation>チャットを削除</translation>
    </message>
    <message>
        <location line="+16" />
        <source>No chat matches</source>
        <translation>一致するチャットはありません</translation>
    </message>
    <message>
        <location line="+0" />
        <source>No chats yet</source>
        <translation>チャットはまだありません</translation>
    </message>
    <message>
        <location line="+24" />
        <source>%1 tok/s</source>
        <translation>%1 トークン/秒</translation>
    </message>
    <message>
        <location line="+35" />
        <source>Ask anything. Drop images here to include them.</source>
        <translation>何でも聞いてください。画像はここにドロップすると添付できます。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Start the engine on the Engine page to chat.</source>
        <translation>チャットするには、エンジン画面でエンジンを起動してください。</translation>
    </message>
    <message>
        <location line="+8" />
        <source>The reply failed: %1</source>
        <translation>応答に失敗しました: %1</translation>
    </message>
    <message>
        <location line="+31" />
        <source>Remove image</source>
        <translation>画像を外す</translation>
    </message>
    <message>
        <location line="+9" />
        <location line="+63" />
        <source>Add an image</source>
        <translation>画像を追加</translation>
    </message>
    <message>
        <location line="-53" />
        <source>Message Niwa (Ctrl+Enter to send)</source>
        <translation>Niwa へのメッセージ（Ctrl+Enter で送信）</translation>
    </message>
    <message>
        <location line="+18" />
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Send</source>
        <translation>送信</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Stop (Esc)</source>
        <translation>停止 (Esc)</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Send (Ctrl+Enter)</source>
        <translation>送信 (Ctrl+Enter)</translation>
    </message>
    <message>
        <location line="+24" />
        <source>Drop images to add them to your message</source>
        <translation>ドロップすると画像をメッセージに追加します</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</source>
        <translation>画像 (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</translation>
    </message>
</context>
<context>
    <name>DashboardPage</name>
    <message>
        <location filename="../../gui/app/qml/DashboardPage.qml" line="+25" />
        <source>Dashboard</source>
        <translation>ダッシュボード</translation>
    </message>
    <message>
        <location line="+3" />
        <source>%1 on %2 · up %3</source>
        <translation>%1（%2）· 稼働 %3</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Not connected: start the engine to see live numbers.</source>
        <translation>未接続です。エンジンを起動すると実際の数値が表示されます。</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Running</source>
        <translation>実行中</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Waiting</source>
        <translation>待機中</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Preemptions</source>
        <translation>プリエンプション</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Generation</source>
        <translation>生成速度</translation>
    </message>
    <message>
        <location line="+1" />
        <source>%1 tok/s</source>
        <translation>%1 トークン/秒</translation>
    </message>
    <message>
        <location line="+11" />
        <source>Throughput</source>
        <translation>スループット</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Tokens per second, last 5 minutes</source>
        <translation>直近 5 分間の毎秒トークン数</translation>
    </message>
    <message>
        <location line="+12" />
        <source>KV cache</source>
        <translation>KV キャッシュ</translation>
    </message>
    <message>
        <location line="+1" />
        <source>%L1 of %L2 tokens</source>
        <translation>%L2 トークン中 %L1</translation>
    </message>
    <message>
        <location line="+12" />
        <source>%1 blocks of %2 · %3</source>
        <translation>%2 ブロック中 %1 · %3</translation>
    </message>
    <message>
        <location line="+5" />
        <source>State slots %1 / %2</source>
        <translation>状態スロット %1 / %2</translation>
    </message>
    <message>
        <location line="+7" />
        <source>GPU memory</source>
        <translation>GPU メモリ</translation>
    </message>
    <message>
        <location line="+1" />
        <source>No GPU in use (CPU backend, or the engine is stopped).</source>
        <translation>使用中の GPU はありません（CPU バックエンド、またはエンジン停止中）。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Engine</source>
        <translation>エンジン</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Other programs</source>
        <translation>ほかのプログラム</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Free</source>
        <translation>空き</translation>
    </message>
    <message>
        <location line="+14" />
        <source>%1 GiB engine · %2 GiB others · %3 GiB free</source>
        <translation>エンジン %1 GiB · ほか %2 GiB · 空き %3 GiB</translation>
    </message>
    <message>
        <location line="+21" />
        <source>%1 h %2 min</source>
        <translation>%1 時間 %2 分</translation>
    </message>
    <message>
        <location line="+0" />
        <source>%1 min %2 s</source>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <location line="+0" />
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
</context>
<context>
    <name>EngineAdvice</name>
    <message>
        <location filename="../../gui/app/engine_advice.cpp" line="+29" />
        <source>The engine program was not found. Run setup again to install it, or set its path in Settings.</source>
        <translation>エンジンのプログラムが見つかりません。セットアップをもう一度実行してインストールするか、設定でパスを指定してください。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Another program uses this port. Choose another port and start again.</source>
        <translation>このポートはほかのプログラムが使っています。別のポートを選んで、もう一度起動してください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The GPUs ran out of memory. Lower the context length, the maximum sequences or the memory share, or choose a smaller KV format.</source>
        <translation>GPU のメモリが足りません。コンテキスト長・最大同時シーケンス数・メモリ割合を下げるか、より小さい KV 形式を選んでください。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serving on the LAN needs an API key. Turn LAN serving off and on again to make a new one.</source>
        <translation>LAN 公開には API キーが必要です。LAN 公開をいったんオフにしてからオンにすると、新しいキーが作られます。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>The model file is missing. Choose it again, or run setup to download it.</source>
        <translation>モデルファイルが見つかりません。選び直すか、セットアップを実行してダウンロードしてください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The model file is damaged or not a Bonsai model. Download it again with setup.</source>
        <translation>モデルファイルが壊れているか、Bonsai のモデルではありません。セットアップでもう一度ダウンロードしてください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The GPU could not be used. Update the NVIDIA driver, or choose the CPU backend.</source>
        <translation>GPU を使えませんでした。NVIDIA ドライバーを更新するか、CPU バックエンドを選んでください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>WSL is not ready. Run setup to install or repair it.</source>
        <translation>WSL の準備ができていません。セットアップを実行してインストールまたは修復してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>See the log below for details, then start again.</source>
        <translation>詳しくは下のログを確認してから、もう一度起動してください。</translation>
    </message>
</context>
<context>
    <name>EngineForm</name>
    <message>
        <location filename="../../gui/app/engine_form.cpp" line="+84" />
        <source>Choose the model file (.gguf), or run setup to download it.</source>
        <translation>モデルファイル（.gguf）を選ぶか、セットアップを実行してダウンロードしてください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>The model must be a .gguf file.</source>
        <translation>モデルは .gguf ファイルを指定してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>No file at this path. Choose the model file again.</source>
        <translation>このパスにファイルがありません。モデルファイルを選び直してください。</translation>
    </message>
    <message>
        <location line="+3" />
        <source>No file at this path. Leave it empty to run without images.</source>
        <translation>このパスにファイルがありません。画像を使わない場合は空欄にしてください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Choose CPU or CUDA.</source>
        <translation>CPU か CUDA を選んでください。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Use a port from 1024 to 65535.</source>
        <translation>1024〜65535 のポート番号を指定してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Use a share from 10% to 99%.</source>
        <translation>10%〜99% の範囲で指定してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Use 0 (no limit) up to 4096 GiB.</source>
        <translation>0（制限なし）〜4096 GiB で指定してください。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Use 1 to 1024 sequences.</source>
        <translation>1〜1024 の範囲で指定してください。</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Use 256 to %L1 tokens (the model's limit).</source>
        <translation>256〜%L1 トークン（モデルの上限）で指定してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Choose a KV format from the list.</source>
        <translation>一覧から KV 形式を選んでください。</translation>
    </message>
    <message>
        <location line="+3" />
        <source>A distro name has only letters, digits, '.', '_' and '-'.</source>
        <translation>ディストリビューション名に使えるのは英数字と「.」「_」「-」だけです。</translation>
    </message>
</context>
<context>
    <name>EnginePage</name>
    <message>
        <location filename="../../gui/app/qml/EnginePage.qml" line="+30" />
        <source>Engine</source>
        <translation>エンジン</translation>
    </message>
    <message>
        <location line="+1" />
        <source>niwa-engine runs the model and serves it at %1</source>
        <translation>niwa-engine がモデルを動かし、%1 で提供します</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Setup checks</source>
        <translation>セットアップの確認</translation>
    </message>
    <message>
        <location line="+20" />
        <source>Running — %1</source>
        <translation>実行中 — %1</translation>
    </message>
    <message>
        <location line="+0" />
        <source>model loaded</source>
        <translation>モデル読み込み済み</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Loading the model… %1%</source>
        <translation>モデルを読み込み中… %1%</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Stopping…</source>
        <translation>停止中…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The engine stopped with an error</source>
        <translation>エンジンがエラーで停止しました</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Stopped</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serving this PC and the LAN at %1</source>
        <translation>この PC と LAN に %1 で提供中</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Serving this PC only. Turn on LAN serving in Settings or the tray menu.</source>
        <translation>この PC だけに提供中です。LAN 公開は設定またはトレイメニューでオンにできます。</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Start</source>
        <translation>起動</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+36" />
        <source>Settings</source>
        <translation>設定</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Changes apply when the engine starts again.</source>
        <translation>変更はエンジンの次回起動時に反映されます。</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <location line="+5" />
        <location line="+7" />
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF モデル (*.gguf)</translation>
    </message>
    <message>
        <location line="-5" />
        <source>Vision projector</source>
        <translation>ビジョンプロジェクター</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Optional: for images</source>
        <translation>任意：画像入力用</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Backend</source>
        <translation>バックエンド</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Automatic</source>
        <translation>自動</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Port</source>
        <translation>ポート</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Memory share</source>
        <translation>メモリ割合</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Of each GPU's memory the engine may take</source>
        <translation>エンジンが各 GPU のメモリをどこまで使えるか</translation>
    </message>
    <message>
        <location line="+6" />
        <source>VRAM limit (GiB)</source>
        <translation>VRAM 上限 (GiB)</translation>
    </message>
    <message>
        <location line="+3" />
        <source>0: the whole card. Set 12 to act like a 12 GB card.</source>
        <translation>0 でカード全体を使用。12 にすると 12 GB のカードと同じ条件になります。</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Max sequences</source>
        <translation>最大同時シーケンス数</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Requests served at the same time</source>
        <translation>同時に処理するリクエスト数</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Context length</source>
        <translation>コンテキスト長</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Tokens per conversation</source>
        <translation>会話 1 つあたりのトークン数</translation>
    </message>
    <message>
        <location line="+11" />
        <source>KV format</source>
        <translation>KV 形式</translation>
    </message>
    <message>
        <location line="+3" />
        <source>k3v2 is the default; k8v8, k4v4 and k3v2 run as f16 until the engine quantizes the cache</source>
        <translation>既定は k3v2 です。k8v8・k4v4・k3v2 は、エンジンがキャッシュの量子化に対応するまで f16 として動きます</translation>
    </message>
    <message>
        <location line="+8" />
        <source>WSL distro</source>
        <translation>WSL ディストリビューション</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Empty: the default distro</source>
        <translation>空欄：既定のディストリビューション</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Revert</source>
        <translation>元に戻す</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Apply and restart</source>
        <translation>適用して再起動</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Apply</source>
        <translation>適用</translation>
    </message>
    <message>
        <location line="+14" />
        <source>What fits</source>
        <translation>収容できる規模</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The CPU backend keeps the cache in the PC's memory.</source>
        <translation>CPU バックエンドでは、キャッシュを PC のメインメモリに置きます。</translation>
    </message>
    <message numerus="yes">
        <location line="+1" />
        <source>Estimated from %n GPU(s) and the model's memory per token</source>
        <translation><numerusform>%n 台の GPU とモデルのトークンあたりメモリから見積もり</numerusform></translation>
    </message>
    <message>
        <location line="+1" />
        <source>GPU memory is not known yet: start the engine once, or set a VRAM limit.</source>
        <translation>GPU のメモリ量がまだ分かりません。エンジンを一度起動するか、VRAM 上限を設定してください。</translation>
    </message>
    <message>
        <location line="+4" />
        <location line="+1" />
        <source>%1 users × %2 tokens</source>
        <translation>%1 人 × %2 トークン</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Not all %1 sequences fit at full context: %1 users get %2 tokens each.</source>
        <translation>%1 シーケンスすべてを最大コンテキストでは収容できません。%1 人なら 1 人あたり %2 トークンです。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The model does not fit in this memory. Raise the memory share or the VRAM limit.</source>
        <translation>このメモリにはモデルが収まりません。メモリ割合か VRAM 上限を上げてください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>KV per token</source>
        <translation>トークンあたりの KV</translation>
    </message>
    <message>
        <location line="+1" />
        <source>State per user</source>
        <translation>1 人あたりの状態</translation>
    </message>
    <message>
        <location line="+1" />
        <source>One user at full context</source>
        <translation>最大コンテキストの 1 人分</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Weights and workspace</source>
        <translation>重みと作業領域</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Needed in all</source>
        <translation>必要な合計</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Available to the engine</source>
        <translation>エンジンが使える量</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Log</source>
        <translation>ログ</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Copy the log</source>
        <translation>ログをコピー</translation>
    </message>
    <message>
        <location line="+24" />
        <source>The engine's output appears here.</source>
        <translation>エンジンの出力がここに表示されます。</translation>
    </message>
</context>
<context>
    <name>EngineStatus</name>
    <message>
        <location filename="../../gui/app/qml/EngineStatus.qml" line="+22" />
        <source>Engine running</source>
        <translation>エンジン実行中</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine starting… %1%</source>
        <translation>エンジン起動中… %1%</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine stopping…</source>
        <translation>エンジン停止中…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine failed</source>
        <translation>エンジンのエラー</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine stopped</source>
        <translation>エンジン停止中</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Serving on the LAN</source>
        <translation>LAN に公開中</translation>
    </message>
</context>
<context>
    <name>Gauge</name>
    <message>
        <location filename="../../gui/app/qml/Gauge.qml" line="+32" />
        <source>in use</source>
        <translation>使用中</translation>
    </message>
</context>
<context>
    <name>LanExposure</name>
    <message>
        <location filename="../../gui/app/lan_exposure.cpp" line="+113" />
        <source>%1 is missing; reinstall Niwa.</source>
        <translation>%1 が見つかりません。Niwa をインストールし直してください。</translation>
    </message>
    <message>
        <location line="+91" />
        <source>The administrator permission was declined.</source>
        <translation>管理者権限の確認が拒否されました。</translation>
    </message>
    <message>
        <location line="+15" />
        <source>niwa-lan.ps1 ended with exit code %1</source>
        <translation>niwa-lan.ps1 が終了コード %1 で終了しました</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../../gui/app/qml/Main.qml" line="+89" />
        <source>Chat</source>
        <translation>チャット</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Dashboard</source>
        <translation>ダッシュボード</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Engine</source>
        <translation>エンジン</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Settings</source>
        <translation>設定</translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <location filename="../../gui/app/qml/MessageDelegate.qml" line="+48" />
        <source>Thinking…</source>
        <translation>考えています…</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Thought process</source>
        <translation>思考過程</translation>
    </message>
    <message>
        <location line="+58" />
        <source>Tool call: %1</source>
        <translation>ツール呼び出し: %1</translation>
    </message>
    <message>
        <location line="+25" />
        <source>Cancel</source>
        <translation>キャンセル</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Send</source>
        <translation>送信</translation>
    </message>
    <message>
        <location line="+8" />
        <source>Waiting for the engine…</source>
        <translation>エンジンの応答を待っています…</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Copy</source>
        <translation>コピー</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Edit and send again</source>
        <translation>編集して再送信</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Regenerate</source>
        <translation>再生成</translation>
    </message>
    <message>
        <location line="+5" />
        <source>%1 tokens · %2 tok/s</source>
        <translation>%1 トークン · %2 トークン/秒</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Stopped</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Cut at the length limit</source>
        <translation>長さの上限で打ち切り</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Failed</source>
        <translation>失敗</translation>
    </message>
    <message>
        <location line="+39" />
        <source>code</source>
        <translation>コード</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Copy code</source>
        <translation>コードをコピー</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Copied</source>
        <translation>コピーしました</translation>
    </message>
</context>
<context>
    <name>PathField</name>
    <message>
        <location filename="../../gui/app/qml/PathField.qml" line="+20" />
        <source>Browse…</source>
        <translation>参照…</translation>
    </message>
    <message>
        <location line="+3" />
        <source>All files (*)</source>
        <translation>すべてのファイル (*)</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../gui/app/qml/SettingsDialog.qml" line="+8" />
        <source>Settings</source>
        <translation>設定</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Close</source>
        <translation>閉じる</translation>
    </message>
    <message>
        <location line="+10" />
        <source>Keep running in the tray when the window is closed</source>
        <translation>ウィンドウを閉じてもトレイで動作を続ける</translation>
    </message>
    <message>
        <location line="+1" />
        <source>This desktop has no system tray: closing the window quits.</source>
        <translation>このデスクトップにはシステムトレイがないため、ウィンドウを閉じると終了します。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serve on the LAN</source>
        <translation>LAN に公開</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Other PCs reach the engine at %1 with the office API key.</source>
        <translation>ほかの PC からはオフィス用 API キーを使って %1 で利用できます。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Only this PC can use the engine. Turning this on makes an API key.</source>
        <translation>エンジンを使えるのはこの PC だけです。オンにすると API キーが作られます。</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Make a new office key</source>
        <translation>オフィス用キーを作り直す</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Theme</source>
        <translation>テーマ</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Dark (follows the system)</source>
        <translation>ダーク（システムに合わせる）</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Light (follows the system)</source>
        <translation>ライト（システムに合わせる）</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Niwa %1</source>
        <translation>Niwa %1</translation>
    </message>
</context>
<context>
    <name>SetupChecks</name>
    <message>
        <location filename="../../gui/core/setup_checks.cpp" line="+140" />
        <source>WSL 2 (Windows Subsystem for Linux)</source>
        <translation>WSL 2（Windows Subsystem for Linux）</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Linux distribution</source>
        <translation>Linux ディストリビューション</translation>
    </message>
    <message>
        <location line="+1" />
        <source>NVIDIA GPU</source>
        <translation>NVIDIA GPU</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Niwa engine</source>
        <translation>Niwa エンジン</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Model</source>
        <translation>モデル</translation>
    </message>
    <message>
        <location line="+54" />
        <source>Not needed: the engine runs directly on this computer.</source>
        <translation>不要です。エンジンはこのコンピューターで直接動きます。</translation>
    </message>
    <message>
        <location line="+27" />
        <source>Waiting for the step above.</source>
        <translation>上の手順を待っています。</translation>
    </message>
    <message>
        <location line="+13" />
        <source>WSL %1</source>
        <translation>WSL %1</translation>
    </message>
    <message>
        <location line="+7" />
        <source>WSL is not installed on this PC.</source>
        <translation>この PC には WSL がインストールされていません。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Install WSL (asks for administrator permission; restart Windows afterwards).</source>
        <translation>WSL をインストール（管理者の許可が必要です。あとで Windows を再起動してください）</translation>
    </message>
    <message>
        <location line="+4" />
        <source>WSL is missing or too old for GPU use (wsl --version: %1).</source>
        <translation>WSL が見つからないか、GPU を使うには古すぎます（wsl --version: %1）。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install or update WSL (wsl --install, then wsl --update).</source>
        <translation>WSL をインストールまたは更新（wsl --install のあと wsl --update）</translation>
    </message>
    <message>
        <location line="+19" />
        <source>No Linux distribution is installed in WSL.</source>
        <translation>WSL に Linux ディストリビューションがインストールされていません。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The distribution '%1' is not installed in WSL.</source>
        <translation>ディストリビューション「%1」は WSL にインストールされていません。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>If it was just installed, open %1 once from the Start menu to finish its setup, then check again.</source>
        <translation>インストールした直後の場合は、スタートメニューから %1 を一度開いてセットアップを済ませてから、もう一度確認してください。</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Install %1 (a download of about 1 GB).</source>
        <translation>%1 をインストール（約 1 GB のダウンロード）</translation>
    </message>
    <message>
        <location line="+8" />
        <source>'%1' runs under WSL 1, which cannot use the GPU.</source>
        <translation>「%1」は WSL 1 で動いているため、GPU を使えません。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Convert '%1' to WSL 2 (takes a few minutes).</source>
        <translation>「%1」を WSL 2 に変換（数分かかります）</translation>
    </message>
    <message>
        <location line="+6" />
        <source>%1 (WSL 2)</source>
        <translation>%1（WSL 2）</translation>
    </message>
    <message>
        <location line="+15" />
        <source>inside WSL</source>
        <translation>WSL 内</translation>
    </message>
    <message>
        <location line="+0" />
        <source>on this computer</source>
        <translation>このコンピューター</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install or update the NVIDIA driver for Windows (not inside Linux), restart Windows, then check again.</source>
        <translation>Windows 用の NVIDIA ドライバーをインストールまたは更新し（Linux 内ではありません）、Windows を再起動してから、もう一度確認してください。</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install the NVIDIA driver (nvidia-smi must work), then check again.</source>
        <translation>NVIDIA ドライバーをインストールして（nvidia-smi が動く状態にして）から、もう一度確認してください。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>No NVIDIA GPU is visible %1.</source>
        <translation>%1 で NVIDIA GPU が見つかりません。</translation>
    </message>
    <message>
        <location line="+16" />
        <source>niwa-engine was not found at '%1'.</source>
        <translation>「%1」に niwa-engine が見つかりません。</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Install the engine and its libraries (takes a few minutes).</source>
        <translation>エンジンとライブラリをインストール（数分かかります）</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Download Ternary-Bonsai-2-27B (about 7.2 GB).</source>
        <translation>Ternary-Bonsai-2-27B をダウンロード（約 7.2 GB）</translation>
    </message>
    <message>
        <location line="+2" />
        <source>No model file is chosen yet.</source>
        <translation>モデルファイルがまだ選ばれていません。</translation>
    </message>
    <message>
        <location line="+13" />
        <source>The model file '%1' is missing.</source>
        <translation>モデルファイル「%1」が見つかりません。</translation>
    </message>
    <message>
        <location line="+34" />
        <source>Updating WSL…</source>
        <translation>WSL を更新中…</translation>
    </message>
    <message>
        <location line="+2" />
        <source>wsl --update failed: %1</source>
        <translation>wsl --update に失敗しました: %1</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Installing WSL…</source>
        <translation>WSL をインストール中…</translation>
    </message>
    <message>
        <location line="+6" />
        <source>wsl --install failed: %1</source>
        <translation>wsl --install に失敗しました: %1</translation>
    </message>
    <message>
        <location line="+5" />
        <source>WSL is installed. Restart Windows, then open Niwa again to continue.</source>
        <translation>WSL をインストールしました。Windows を再起動してから、もう一度 Niwa を開いて続けてください。</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Converting '%1' to WSL 2…</source>
        <translation>「%1」を WSL 2 に変換中…</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Converting to WSL 2 failed: %1</source>
        <translation>WSL 2 への変換に失敗しました: %1</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Installing %1…</source>
        <translation>%1 をインストール中…</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Installing %1 failed: %2</source>
        <translation>%1 のインストールに失敗しました: %2</translation>
    </message>
    <message>
        <location line="+13" />
        <source>Installing the engine…</source>
        <translation>エンジンをインストール中…</translation>
    </message>
    <message>
        <location line="+24" />
        <source>The engine could not be installed: %1</source>
        <translation>エンジンをインストールできませんでした: %1</translation>
    </message>
    <message>
        <location line="+13" />
        <source>The engine's libraries could not be installed: %1</source>
        <translation>エンジンのライブラリをインストールできませんでした: %1</translation>
    </message>
    <message>
        <location line="+11" />
        <source>Install the engine first: it downloads the model.</source>
        <translation>先にエンジンをインストールしてください。モデルはエンジンがダウンロードします。</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Downloading the model…</source>
        <translation>モデルをダウンロード中…</translation>
    </message>
    <message>
        <location line="+14" />
        <source>The download stopped: %1
Choose the fix again to resume it.</source>
        <translation>ダウンロードが止まりました: %1
もう一度「修正」を選ぶと再開します。</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Downloading the model: %1 of %2 GB</source>
        <translation>モデルをダウンロード中: %2 GB 中 %1 GB</translation>
    </message>
</context>
<context>
    <name>TpsChart</name>
    <message>
        <location filename="../../gui/app/qml/TpsChart.qml" line="+12" />
        <source>Generation %1 tok/s</source>
        <translation>生成 %1 トークン/秒</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Prompt %1 tok/s</source>
        <translation>プロンプト %1 トークン/秒</translation>
    </message>
    <message>
        <location line="+38" />
        <source>now</source>
        <translation>現在</translation>
    </message>
    <message>
        <location line="+0" />
        <source>-%1 min</source>
        <translation>%1 分前</translation>
    </message>
</context>
<context>
    <name>TrayIcon</name>
    <message>
        <location filename="../../gui/app/tray_icon.cpp" line="+49" />
        <source>Serve on LAN</source>
        <translation>LAN に公開</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Open Niwa</source>
        <translation>Niwa を開く</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Quit</source>
        <translation>終了</translation>
    </message>
    <message>
        <location line="+8" />
        <source>Engine running</source>
        <translation>エンジン実行中</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine starting</source>
        <translation>エンジン起動中</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine stopped with an error</source>
        <translation>エンジンがエラーで停止</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine stopped</source>
        <translation>エンジン停止中</translation>
    </message>
    <message>
        <location line="+2" />
        <source> · serving on the LAN</source>
        <translation> · LAN に公開中</translation>
    </message>
</context>
<context>
    <name>WizardPage</name>
    <message>
        <location filename="../../gui/app/qml/WizardPage.qml" line="+15" />
        <source>Windows Subsystem for Linux</source>
        <translation>Windows Subsystem for Linux</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Linux distribution</source>
        <translation>Linux ディストリビューション</translation>
    </message>
    <message>
        <location line="+1" />
        <source>GPU and driver</source>
        <translation>GPU とドライバー</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Niwa engine</source>
        <translation>Niwa エンジン</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Model file</source>
        <translation>モデルファイル</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Waiting</source>
        <translation>待機中</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Checking…</source>
        <translation>確認中…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Ready</source>
        <translation>準備完了</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Needs attention</source>
        <translation>対応が必要</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Skipped</source>
        <translation>スキップ</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Set up Niwa</source>
        <translation>Niwa のセットアップ</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Niwa checks what the engine needs on this PC and offers to fix what is missing.</source>
        <translation>エンジンに必要なものがこの PC にそろっているかを確認し、足りないものは修正を提案します。</translation>
    </message>
    <message>
        <location line="+47" />
        <source>Fix</source>
        <translation>修正</translation>
    </message>
    <message>
        <location line="+21" />
        <source>Working…</source>
        <translation>処理中…</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Everything is ready.</source>
        <translation>すべて準備ができました。</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Fix the steps marked above, or continue and set the engine up by hand.</source>
        <translation>上で印の付いた項目を修正するか、このまま進んで手動でエンジンを設定してください。</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Check again</source>
        <translation>もう一度確認</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Continue</source>
        <translation>続ける</translation>
    </message>
</context>
</TS>

<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>ApiKeyDialog</name>
    <message>
        <location filename="../../gui/app/qml/ApiKeyDialog.qml" line="+10" />
        <source>Your office API key</source>
        <translation>Your office API key</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Done</source>
        <translation>Done</translation>
    </message>
    <message>
        <location line="+12" />
        <source>Give this key to the people and programs that use Niwa from other PCs. It is shown only now: copy it before you close this window.</source>
        <translation>Give this key to the people and programs that use Niwa from other PCs. It is shown only now: copy it before you close this window.</translation>
    </message>
    <message>
        <location line="+10" />
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Copied to the clipboard.</source>
        <translation>Copied to the clipboard.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Clients use base URL %1 and send the key as a Bearer token.</source>
        <translation>Clients use base URL %1 and send the key as a Bearer token.</translation>
    </message>
</context>
<context>
    <name>AppController</name>
    <message>
        <location filename="../../gui/app/app_controller.cpp" line="+243" />
        <source>Fix the highlighted settings first.</source>
        <translation>Fix the highlighted settings first.</translation>
    </message>
    <message>
        <location line="+8" />
        <source>LAN serving needs an API key; serving on this PC only.</source>
        <translation>LAN serving needs an API key; serving on this PC only.</translation>
    </message>
    <message>
        <location line="+52" />
        <source>Wait for the reply to finish, or stop it.</source>
        <translation>Wait for the reply to finish, or stop it.</translation>
    </message>
    <message>
        <location line="+26" />
        <source>Start the engine first (Engine page).</source>
        <translation>Start the engine first (Engine page).</translation>
    </message>
    <message>
        <location line="+28" />
        <source>%1 is not an image.</source>
        <translation>%1 is not an image.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>%1 is larger than 20 MB.</source>
        <translation>%1 is larger than 20 MB.</translation>
    </message>
    <message>
        <location line="+79" />
        <source>LAN serving is off: Windows needs administrator permission to open the engine's port to the LAN.</source>
        <translation>LAN serving is off: Windows needs administrator permission to open the engine's port to the LAN.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>LAN serving is off: the engine's port could not be opened to the LAN (%1).</source>
        <translation>LAN serving is off: the engine's port could not be opened to the LAN (%1).</translation>
    </message>
    <message>
        <location line="+5" />
        <source>The engine serves this PC only, but the LAN port forward and firewall rule stay in Windows: removing them needs administrator permission.</source>
        <translation>The engine serves this PC only, but the LAN port forward and firewall rule stay in Windows: removing them needs administrator permission.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>The engine serves this PC only, but the LAN port forward and firewall rule could not be removed (%1).</source>
        <translation>The engine serves this PC only, but the LAN port forward and firewall rule could not be removed (%1).</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Other PCs may not reach the engine: the LAN port forward could not be updated to WSL's new address (%1).</source>
        <translation>Other PCs may not reach the engine: the LAN port forward could not be updated to WSL's new address (%1).</translation>
    </message>
</context>
<context>
    <name>ChatPage</name>
    <message>
        <location filename="../../gui/app/qml/ChatPage.qml" line="+38" />
        <source>Search chats</source>
        <translation>Search chats</translation>
    </message>
    <message>
        <location line="+7" />
        <source>New chat (Ctrl+N)</source>
        <translation>New chat (Ctrl+N)</translation>
    </message>
    <message>
        <location line="+23" />
        <location line="+40" />
        <source>New chat</source>
        <translation>New chat</translation>
    </message>
    <message>
        <location line="-34" />
        <source>Delete chat</source>
        <translation>Delete chat</translation>
    </message>
    <message>
        <location line="+16" />
        <source>No chat matches</source>
        <translation>No chat matches</translation>
    </message>
    <message>
        <location line="+0" />
        <source>No chats yet</source>
        <translation>No chats yet</translation>
    </message>
    <message>
        <location line="+24" />
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location line="+35" />
        <source>Ask anything. Drop images here to include them.</source>
        <translation>Ask anything. Drop images here to include them.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Start the engine on the Engine page to chat.</source>
        <translation>Start the engine on the Engine page to chat.</translation>
    </message>
    <message>
        <location line="+8" />
        <source>The reply failed: %1</source>
        <translation>The reply failed: %1</translation>
    </message>
    <message>
        <location line="+31" />
        <source>Remove image</source>
        <translation>Remove image</translation>
    </message>
    <message>
        <location line="+9" />
        <location line="+63" />
        <source>Add an image</source>
        <translation>Add an image</translation>
    </message>
    <message>
        <location line="-53" />
        <source>Message Niwa (Ctrl+Enter to send)</source>
        <translation>Message Niwa (Ctrl+Enter to send)</translation>
    </message>
    <message>
        <location line="+18" />
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Send</source>
        <translation>Send</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Stop (Esc)</source>
        <translation>Stop (Esc)</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Send (Ctrl+Enter)</source>
        <translation>Send (Ctrl+Enter)</translation>
    </message>
    <message>
        <location line="+24" />
        <source>Drop images to add them to your message</source>
        <translation>Drop images to add them to your message</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</source>
        <translation>Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)</translation>
    </message>
</context>
<context>
    <name>DashboardPage</name>
    <message>
        <location filename="../../gui/app/qml/DashboardPage.qml" line="+25" />
        <source>Dashboard</source>
        <translation>Dashboard</translation>
    </message>
    <message>
        <location line="+3" />
        <source>%1 on %2 · up %3</source>
        <translation>%1 on %2 · up %3</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Not connected: start the engine to see live numbers.</source>
        <translation>Not connected: start the engine to see live numbers.</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Running</source>
        <translation>Running</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Waiting</source>
        <translation>Waiting</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Preemptions</source>
        <translation>Preemptions</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Generation</source>
        <translation>Generation</translation>
    </message>
    <message>
        <location line="+1" />
        <source>%1 tok/s</source>
        <translation>%1 tok/s</translation>
    </message>
    <message>
        <location line="+11" />
        <source>Throughput</source>
        <translation>Throughput</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Tokens per second, last 5 minutes</source>
        <translation>Tokens per second, last 5 minutes</translation>
    </message>
    <message>
        <location line="+12" />
        <source>KV cache</source>
        <translation>KV cache</translation>
    </message>
    <message>
        <location line="+1" />
        <source>%L1 of %L2 tokens</source>
        <translation>%L1 of %L2 tokens</translation>
    </message>
    <message>
        <location line="+12" />
        <source>%1 blocks of %2 · %3</source>
        <translation>%1 blocks of %2 · %3</translation>
    </message>
    <message>
        <location line="+5" />
        <source>State slots %1 / %2</source>
        <translation>State slots %1 / %2</translation>
    </message>
    <message>
        <location line="+7" />
        <source>GPU memory</source>
        <translation>GPU memory</translation>
    </message>
    <message>
        <location line="+1" />
        <source>No GPU in use (CPU backend, or the engine is stopped).</source>
        <translation>No GPU in use (CPU backend, or the engine is stopped).</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Other programs</source>
        <translation>Other programs</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Free</source>
        <translation>Free</translation>
    </message>
    <message>
        <location line="+14" />
        <source>%1 GiB engine · %2 GiB others · %3 GiB free</source>
        <translation>%1 GiB engine · %2 GiB others · %3 GiB free</translation>
    </message>
    <message>
        <location line="+21" />
        <source>%1 h %2 min</source>
        <translation>%1 h %2 min</translation>
    </message>
    <message>
        <location line="+0" />
        <source>%1 min %2 s</source>
        <translation>%1 min %2 s</translation>
    </message>
    <message>
        <location line="+0" />
        <source>%1 s</source>
        <translation>%1 s</translation>
    </message>
</context>
<context>
    <name>EngineAdvice</name>
    <message>
        <location filename="../../gui/app/engine_advice.cpp" line="+29" />
        <source>The engine program was not found. Run setup again to install it, or set its path in Settings.</source>
        <translation>The engine program was not found. Run setup again to install it, or set its path in Settings.</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Another program uses this port. Choose another port and start again.</source>
        <translation>Another program uses this port. Choose another port and start again.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The GPUs ran out of memory. Lower the context length, the maximum sequences or the memory share, or choose a smaller KV format.</source>
        <translation>The GPUs ran out of memory. Lower the context length, the maximum sequences or the memory share, or choose a smaller KV format.</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serving on the LAN needs an API key. Turn LAN serving off and on again to make a new one.</source>
        <translation>Serving on the LAN needs an API key. Turn LAN serving off and on again to make a new one.</translation>
    </message>
    <message>
        <location line="+6" />
        <source>The model file is missing. Choose it again, or run setup to download it.</source>
        <translation>The model file is missing. Choose it again, or run setup to download it.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The model file is damaged or not a Bonsai model. Download it again with setup.</source>
        <translation>The model file is damaged or not a Bonsai model. Download it again with setup.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>The GPU could not be used. Update the NVIDIA driver, or choose the CPU backend.</source>
        <translation>The GPU could not be used. Update the NVIDIA driver, or choose the CPU backend.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>WSL is not ready. Run setup to install or repair it.</source>
        <translation>WSL is not ready. Run setup to install or repair it.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>See the log below for details, then start again.</source>
        <translation>See the log below for details, then start again.</translation>
    </message>
</context>
<context>
    <name>EngineForm</name>
    <message>
        <location filename="../../gui/app/engine_form.cpp" line="+84" />
        <source>Choose the model file (.gguf), or run setup to download it.</source>
        <translation>Choose the model file (.gguf), or run setup to download it.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>The model must be a .gguf file.</source>
        <translation>The model must be a .gguf file.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>No file at this path. Choose the model file again.</source>
        <translation>No file at this path. Choose the model file again.</translation>
    </message>
    <message>
        <location line="+3" />
        <source>No file at this path. Leave it empty to run without images.</source>
        <translation>No file at this path. Leave it empty to run without images.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Choose CPU or CUDA.</source>
        <translation>Choose CPU or CUDA.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Use a port from 1024 to 65535.</source>
        <translation>Use a port from 1024 to 65535.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Use a share from 10% to 99%.</source>
        <translation>Use a share from 10% to 99%.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Use 0 (no limit) up to 4096 GiB.</source>
        <translation>Use 0 (no limit) up to 4096 GiB.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Use 1 to 1024 sequences.</source>
        <translation>Use 1 to 1024 sequences.</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Use 256 to %L1 tokens (the model's limit).</source>
        <translation>Use 256 to %L1 tokens (the model's limit).</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Choose a KV format from the list.</source>
        <translation>Choose a KV format from the list.</translation>
    </message>
    <message>
        <location line="+3" />
        <source>A distro name has only letters, digits, '.', '_' and '-'.</source>
        <translation>A distro name has only letters, digits, '.', '_' and '-'.</translation>
    </message>
</context>
<context>
    <name>EnginePage</name>
    <message>
        <location filename="../../gui/app/qml/EnginePage.qml" line="+30" />
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location line="+1" />
        <source>niwa-engine runs the model and serves it at %1</source>
        <translation>niwa-engine runs the model and serves it at %1</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Setup checks</source>
        <translation>Setup checks</translation>
    </message>
    <message>
        <location line="+20" />
        <source>Running — %1</source>
        <translation>Running — %1</translation>
    </message>
    <message>
        <location line="+0" />
        <source>model loaded</source>
        <translation>model loaded</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Loading the model… %1%</source>
        <translation>Loading the model… %1%</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Stopping…</source>
        <translation>Stopping…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The engine stopped with an error</source>
        <translation>The engine stopped with an error</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Stopped</source>
        <translation>Stopped</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serving this PC and the LAN at %1</source>
        <translation>Serving this PC and the LAN at %1</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Serving this PC only. Turn on LAN serving in Settings or the tray menu.</source>
        <translation>Serving this PC only. Turn on LAN serving in Settings or the tray menu.</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Start</source>
        <translation>Start</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Stop</source>
        <translation>Stop</translation>
    </message>
    <message>
        <location line="+36" />
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Changes apply when the engine starts again.</source>
        <translation>Changes apply when the engine starts again.</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <location line="+5" />
        <location line="+7" />
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF models (*.gguf)</translation>
    </message>
    <message>
        <location line="-5" />
        <source>Vision projector</source>
        <translation>Vision projector</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Optional: for images</source>
        <translation>Optional: for images</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Backend</source>
        <translation>Backend</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Automatic</source>
        <translation>Automatic</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Memory share</source>
        <translation>Memory share</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Of each GPU's memory the engine may take</source>
        <translation>Of each GPU's memory the engine may take</translation>
    </message>
    <message>
        <location line="+6" />
        <source>VRAM limit (GiB)</source>
        <translation>VRAM limit (GiB)</translation>
    </message>
    <message>
        <location line="+3" />
        <source>0: the whole card. Set 12 to act like a 12 GB card.</source>
        <translation>0: the whole card. Set 12 to act like a 12 GB card.</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Max sequences</source>
        <translation>Max sequences</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Requests served at the same time</source>
        <translation>Requests served at the same time</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Context length</source>
        <translation>Context length</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Tokens per conversation</source>
        <translation>Tokens per conversation</translation>
    </message>
    <message>
        <location line="+11" />
        <source>KV format</source>
        <translation>KV format</translation>
    </message>
    <message>
        <location line="+3" />
        <source>k3v2 is the default; k8v8, k4v4 and k3v2 run as f16 until the engine quantizes the cache</source>
        <translation>k3v2 is the default; k8v8, k4v4 and k3v2 run as f16 until the engine quantizes the cache</translation>
    </message>
    <message>
        <location line="+8" />
        <source>WSL distro</source>
        <translation>WSL distro</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Empty: the default distro</source>
        <translation>Empty: the default distro</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Revert</source>
        <translation>Revert</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Apply and restart</source>
        <translation>Apply and restart</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Apply</source>
        <translation>Apply</translation>
    </message>
    <message>
        <location line="+14" />
        <source>What fits</source>
        <translation>What fits</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The CPU backend keeps the cache in the PC's memory.</source>
        <translation>The CPU backend keeps the cache in the PC's memory.</translation>
    </message>
    <message numerus="yes">
        <location line="+1" />
        <source>Estimated from %n GPU(s) and the model's memory per token</source>
        <translation><numerusform>Estimated from %n GPU and the model's memory per token</numerusform><numerusform>Estimated from %n GPUs and the model's memory per token</numerusform></translation>
    </message>
    <message>
        <location line="+1" />
        <source>GPU memory is not known yet: start the engine once, or set a VRAM limit.</source>
        <translation>GPU memory is not known yet: start the engine once, or set a VRAM limit.</translation>
    </message>
    <message>
        <location line="+4" />
        <location line="+1" />
        <source>%1 users × %2 tokens</source>
        <translation>%1 users × %2 tokens</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Not all %1 sequences fit at full context: %1 users get %2 tokens each.</source>
        <translation>Not all %1 sequences fit at full context: %1 users get %2 tokens each.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The model does not fit in this memory. Raise the memory share or the VRAM limit.</source>
        <translation>The model does not fit in this memory. Raise the memory share or the VRAM limit.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>KV per token</source>
        <translation>KV per token</translation>
    </message>
    <message>
        <location line="+1" />
        <source>State per user</source>
        <translation>State per user</translation>
    </message>
    <message>
        <location line="+1" />
        <source>One user at full context</source>
        <translation>One user at full context</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Weights and workspace</source>
        <translation>Weights and workspace</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Needed in all</source>
        <translation>Needed in all</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Available to the engine</source>
        <translation>Available to the engine</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Log</source>
        <translation>Log</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Copy the log</source>
        <translation>Copy the log</translation>
    </message>
    <message>
        <location line="+24" />
        <source>The engine's output appears here.</source>
        <translation>The engine's output appears here.</translation>
    </message>
</context>
<context>
    <name>EngineStatus</name>
    <message>
        <location filename="../../gui/app/qml/EngineStatus.qml" line="+22" />
        <source>Engine running</source>
        <translation>Engine running</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine starting… %1%</source>
        <translation>Engine starting… %1%</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine stopping…</source>
        <translation>Engine stopping…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine failed</source>
        <translation>Engine failed</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Engine stopped</source>
        <translation>Engine stopped</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Serving on the LAN</source>
        <translation>Serving on the LAN</translation>
    </message>
</context>
<context>
    <name>Gauge</name>
    <message>
        <location filename="../../gui/app/qml/Gauge.qml" line="+32" />
        <source>in use</source>
        <translation>in use</translation>
    </message>
</context>
<context>
    <name>LanExposure</name>
    <message>
        <location filename="../../gui/app/lan_exposure.cpp" line="+113" />
        <source>%1 is missing; reinstall Niwa.</source>
        <translation>%1 is missing; reinstall Niwa.</translation>
    </message>
    <message>
        <location line="+91" />
        <source>The administrator permission was declined.</source>
        <translation>The administrator permission was declined.</translation>
    </message>
    <message>
        <location line="+15" />
        <source>niwa-lan.ps1 ended with exit code %1</source>
        <translation>niwa-lan.ps1 ended with exit code %1</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <location filename="../../gui/app/qml/Main.qml" line="+89" />
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Dashboard</source>
        <translation>Dashboard</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Engine</source>
        <translation>Engine</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
</context>
<context>
    <name>MessageDelegate</name>
    <message>
        <location filename="../../gui/app/qml/MessageDelegate.qml" line="+48" />
        <source>Thinking…</source>
        <translation>Thinking…</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Thought process</source>
        <translation>Thought process</translation>
    </message>
    <message>
        <location line="+58" />
        <source>Tool call: %1</source>
        <translation>Tool call: %1</translation>
    </message>
    <message>
        <location line="+25" />
        <source>Cancel</source>
        <translation>Cancel</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Send</source>
        <translation>Send</translation>
    </message>
    <message>
        <location line="+8" />
        <source>Waiting for the engine…</source>
        <translation>Waiting for the engine…</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Copy</source>
        <translation>Copy</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Edit and send again</source>
        <translation>Edit and send again</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Regenerate</source>
        <translation>Regenerate</translation>
    </message>
    <message>
        <location line="+5" />
        <source>%1 tokens · %2 tok/s</source>
        <translation>%1 tokens · %2 tok/s</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Stopped</source>
        <translation>Stopped</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Cut at the length limit</source>
        <translation>Cut at the length limit</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Failed</source>
        <translation>Failed</translation>
    </message>
    <message>
        <location line="+39" />
        <source>code</source>
        <translation>code</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Copy code</source>
        <translation>Copy code</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Copied</source>
        <translation>Copied</translation>
    </message>
</context>
<context>
    <name>PathField</name>
    <message>
        <location filename="../../gui/app/qml/PathField.qml" line="+20" />
        <source>Browse…</source>
        <translation>Browse…</translation>
    </message>
    <message>
        <location line="+3" />
        <source>All files (*)</source>
        <translation>All files (*)</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../gui/app/qml/SettingsDialog.qml" line="+8" />
        <source>Settings</source>
        <translation>Settings</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Close</source>
        <translation>Close</translation>
    </message>
    <message>
        <location line="+10" />
        <source>Keep running in the tray when the window is closed</source>
        <translation>Keep running in the tray when the window is closed</translation>
    </message>
    <message>
        <location line="+1" />
        <source>This desktop has no system tray: closing the window quits.</source>
        <translation>This desktop has no system tray: closing the window quits.</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Serve on the LAN</source>
        <translation>Serve on the LAN</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Other PCs reach the engine at %1 with the office API key.</source>
        <translation>Other PCs reach the engine at %1 with the office API key.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Only this PC can use the engine. Turning this on makes an API key.</source>
        <translation>Only this PC can use the engine. Turning this on makes an API key.</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Make a new office key</source>
        <translation>Make a new office key</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Theme</source>
        <translation>Theme</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Dark (follows the system)</source>
        <translation>Dark (follows the system)</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Light (follows the system)</source>
        <translation>Light (follows the system)</translation>
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
        <translation>WSL 2 (Windows Subsystem for Linux)</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Linux distribution</source>
        <translation>Linux distribution</translation>
    </message>
    <message>
        <location line="+1" />
        <source>NVIDIA GPU</source>
        <translation>NVIDIA GPU</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Niwa engine</source>
        <translation>Niwa engine</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Model</source>
        <translation>Model</translation>
    </message>
    <message>
        <location line="+54" />
        <source>Not needed: the engine runs directly on this computer.</source>
        <translation>Not needed: the engine runs directly on this computer.</translation>
    </message>
    <message>
        <location line="+27" />
        <source>Waiting for the step above.</source>
        <translation>Waiting for the step above.</translation>
    </message>
    <message>
        <location line="+13" />
        <source>WSL %1</source>
        <translation>WSL %1</translation>
    </message>
    <message>
        <location line="+7" />
        <source>WSL is not installed on this PC.</source>
        <translation>WSL is not installed on this PC.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Install WSL (asks for administrator permission; restart Windows afterwards).</source>
        <translation>Install WSL (asks for administrator permission; restart Windows afterwards).</translation>
    </message>
    <message>
        <location line="+4" />
        <source>WSL is missing or too old for GPU use (wsl --version: %1).</source>
        <translation>WSL is missing or too old for GPU use (wsl --version: %1).</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install or update WSL (wsl --install, then wsl --update).</source>
        <translation>Install or update WSL (wsl --install, then wsl --update).</translation>
    </message>
    <message>
        <location line="+19" />
        <source>No Linux distribution is installed in WSL.</source>
        <translation>No Linux distribution is installed in WSL.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>The distribution '%1' is not installed in WSL.</source>
        <translation>The distribution '%1' is not installed in WSL.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>If it was just installed, open %1 once from the Start menu to finish its setup, then check again.</source>
        <translation>If it was just installed, open %1 once from the Start menu to finish its setup, then check again.</translation>
    </message>
    <message>
        <location line="+5" />
        <source>Install %1 (a download of about 1 GB).</source>
        <translation>Install %1 (a download of about 1 GB).</translation>
    </message>
    <message>
        <location line="+8" />
        <source>'%1' runs under WSL 1, which cannot use the GPU.</source>
        <translation>'%1' runs under WSL 1, which cannot use the GPU.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Convert '%1' to WSL 2 (takes a few minutes).</source>
        <translation>Convert '%1' to WSL 2 (takes a few minutes).</translation>
    </message>
    <message>
        <location line="+6" />
        <source>%1 (WSL 2)</source>
        <translation>%1 (WSL 2)</translation>
    </message>
    <message>
        <location line="+15" />
        <source>inside WSL</source>
        <translation>inside WSL</translation>
    </message>
    <message>
        <location line="+0" />
        <source>on this computer</source>
        <translation>on this computer</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install or update the NVIDIA driver for Windows (not inside Linux), restart Windows, then check again.</source>
        <translation>Install or update the NVIDIA driver for Windows (not inside Linux), restart Windows, then check again.</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Install the NVIDIA driver (nvidia-smi must work), then check again.</source>
        <translation>Install the NVIDIA driver (nvidia-smi must work), then check again.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>No NVIDIA GPU is visible %1.</source>
        <translation>No NVIDIA GPU is visible %1.</translation>
    </message>
    <message>
        <location line="+16" />
        <source>niwa-engine was not found at '%1'.</source>
        <translation>niwa-engine was not found at '%1'.</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Install the engine and its libraries (takes a few minutes).</source>
        <translation>Install the engine and its libraries (takes a few minutes).</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Download Ternary-Bonsai-2-27B (about 7.2 GB).</source>
        <translation>Download Ternary-Bonsai-2-27B (about 7.2 GB).</translation>
    </message>
    <message>
        <location line="+2" />
        <source>No model file is chosen yet.</source>
        <translation>No model file is chosen yet.</translation>
    </message>
    <message>
        <location line="+13" />
        <source>The model file '%1' is missing.</source>
        <translation>The model file '%1' is missing.</translation>
    </message>
    <message>
        <location line="+34" />
        <source>Updating WSL…</source>
        <translation>Updating WSL…</translation>
    </message>
    <message>
        <location line="+2" />
        <source>wsl --update failed: %1</source>
        <translation>wsl --update failed: %1</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Installing WSL…</source>
        <translation>Installing WSL…</translation>
    </message>
    <message>
        <location line="+6" />
        <source>wsl --install failed: %1</source>
        <translation>wsl --install failed: %1</translation>
    </message>
    <message>
        <location line="+5" />
        <source>WSL is installed. Restart Windows, then open Niwa again to continue.</source>
        <translation>WSL is installed. Restart Windows, then open Niwa again to continue.</translation>
    </message>
    <message>
        <location line="+7" />
        <source>Converting '%1' to WSL 2…</source>
        <translation>Converting '%1' to WSL 2…</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Converting to WSL 2 failed: %1</source>
        <translation>Converting to WSL 2 failed: %1</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Installing %1…</source>
        <translation>Installing %1…</translation>
    </message>
    <message>
        <location line="+9" />
        <source>Installing %1 failed: %2</source>
        <translation>Installing %1 failed: %2</translation>
    </message>
    <message>
        <location line="+13" />
        <source>Installing the engine…</source>
        <translation>Installing the engine…</translation>
    </message>
    <message>
        <location line="+24" />
        <source>The engine could not be installed: %1</source>
        <translation>The engine could not be installed: %1</translation>
    </message>
    <message>
        <location line="+13" />
        <source>The engine's libraries could not be installed: %1</source>
        <translation>The engine's libraries could not be installed: %1</translation>
    </message>
    <message>
        <location line="+11" />
        <source>Install the engine first: it downloads the model.</source>
        <translation>Install the engine first: it downloads the model.</translation>
    </message>
    <message>
        <location line="+3" />
        <source>Downloading the model…</source>
        <translation>Downloading the model…</translation>
    </message>
    <message>
        <location line="+14" />
        <source>The download stopped: %1
Choose the fix again to resume it.</source>
        <translation>The download stopped: %1
Choose the fix again to resume it.</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Downloading the model: %1 of %2 GB</source>
        <translation>Downloading the model: %1 of %2 GB</translation>
    </message>
</context>
<context>
    <name>TpsChart</name>
    <message>
        <location filename="../../gui/app/qml/TpsChart.qml" line="+12" />
        <source>Generation %1 tok/s</source>
        <translation>Generation %1 tok/s</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Prompt %1 tok/s</source>
        <translation>Prompt %1 tok/s</translation>
    </message>
    <message>
        <location line="+38" />
        <source>now</source>
        <translation>now</translation>
    </message>
    <message>
        <location line="+0" />
        <source>-%1 min</source>
        <translation>-%1 min</translation>
    </message>
</context>
<context>
    <name>TrayIcon</name>
    <message>
        <location filename="../../gui/app/tray_icon.cpp" line="+49" />
        <source>Serve on LAN</source>
        <translation>Serve on LAN</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Open Niwa</source>
        <translation>Open Niwa</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Quit</source>
        <translation>Quit</translation>
    </message>
    <message>
        <location line="+8" />
        <source>Engine running</source>
        <translation>Engine running</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine starting</source>
        <translation>Engine starting</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine stopped with an error</source>
        <translation>Engine stopped with an error</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Engine stopped</source>
        <translation>Engine stopped</translation>
    </message>
    <message>
        <location line="+2" />
        <source> · serving on the LAN</source>
        <translation> · serving on the LAN</translation>
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
        <translation>Linux distribution</translation>
    </message>
    <message>
        <location line="+1" />
        <source>GPU and driver</source>
        <translation>GPU and driver</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Niwa engine</source>
        <translation>Niwa engine</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Model file</source>
        <translation>Model file</translation>
    </message>
    <message>
        <location line="+6" />
        <source>Waiting</source>
        <translation>Waiting</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Checking…</source>
        <translation>Checking…</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Ready</source>
        <translation>Ready</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Needs attention</source>
        <translation>Needs attention</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Skipped</source>
        <translation>Skipped</translation>
    </message>
    <message>
        <location line="+14" />
        <source>Set up Niwa</source>
        <translation>Set up Niwa</translation>
    </message>
    <message>
        <location line="+2" />
        <source>Niwa checks what the engine needs on this PC and offers to fix what is missing.</source>
        <translation>Niwa checks what the engine needs on this PC and offers to fix what is missing.</translation>
    </message>
    <message>
        <location line="+47" />
        <source>Fix</source>
        <translation>Fix</translation>
    </message>
    <message>
        <location line="+21" />
        <source>Working…</source>
        <translation>Working…</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Everything is ready.</source>
        <translation>Everything is ready.</translation>
    </message>
    <message>
        <location line="+0" />
        <source>Fix the steps marked above, or continue and set the engine up by hand.</source>
        <translation>Fix the steps marked above, or continue and set the engine up by hand.</translation>
    </message>
    <message>
        <location line="+4" />
        <source>Check again</source>
        <translation>Check again</translation>
    </message>
    <message>
        <location line="+1" />
        <source>Continue</source>
        <translation>Continue</translation>
    </message>
</context>
</TS>

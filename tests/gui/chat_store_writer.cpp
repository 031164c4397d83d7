// chat_store_writer DB: streams a reply into a ChatStore forever, printing "written N" after
// each piece is committed. test_chat_store SIGKILLs it mid-reply and reopens the file.
#include <QCoreApplication>
#include <QThread>
#include <cstdio>

#include "gui/core/chat_store.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    niwa::gui::ChatStore store;
    if (argc < 2 || !store.open(QString::fromLocal8Bit(argv[1]))) {
        std::fprintf(stderr, "chat_store_writer: cannot open the store\n");
        return 1;
    }
    const qint64 conversation = store.createConversation(QStringLiteral("killed mid-reply"));
    niwa::gui::ChatMessage question;
    question.conversationId = conversation;
    question.role = QStringLiteral("user");
    question.content = QStringLiteral("Write forever.");
    store.addMessage(question);
    const qint64 reply = store.beginReply(conversation, QStringLiteral("bonsai-27b"));
    std::printf("reply %lld\n", static_cast<long long>(reply));
    std::fflush(stdout);
    for (int n = 0;; ++n) {
        if (!store.appendToReply(reply, QStringLiteral("piece%1 ").arg(n), QStringLiteral("r%1 ").arg(n)))
            return 1;
        std::printf("written %d\n", n);
        std::fflush(stdout);
        QThread::msleep(2);
    }
}

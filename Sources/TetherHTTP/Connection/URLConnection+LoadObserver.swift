import Foundation
import NIOCore
import NIOFoundationCompat
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLConnection: LoadObserver {
    func loadWillSend(_ request: URLRequest, redirectResponse: HTTPURLResponse?) async -> URLRequest? {
        guard self.hasDataDelegate else { return request }
        // Sendable: the response is only read, on the delivery target, once the load handed it over.
        let response = UncheckedSendableBox(redirectResponse)
        return await self.call(default: request) { delegate in
            guard let dataDelegate = delegate as? any URLConnectionDataDelegate else { return request }
            return dataDelegate.connection(self, willSend: request, redirectResponse: response.value)
        }
    }

    func loadShouldUseCredentialStorage() async -> Bool {
        await self.call(default: true) { $0.connectionShouldUseCredentialStorage(self) }
    }

    func loadDidReceive(_ challenge: URLAuthenticationChallenge) {
        // Sendable: the challenge is only used on the delivery target (or here, when there is none).
        let box = UncheckedSendableBox(challenge)
        guard let delivery = self.delivery else {
            self.answer(challenge, with: .cancel)
            return
        }
        delivery.submit { isLive in
            guard isLive else {
                self.answer(box.value, with: .cancel)
                return
            }
            if let delegate = self.delegate {
                delegate.connection(self, willSendRequestFor: box.value)
            } else {
                self.answer(box.value, with: .performDefaultHandling)
            }
        }
    }

    func loadNeedsNewBodyStream(_ request: URLRequest) async -> UncheckedSendableBox<InputStream?> {
        guard self.hasDataDelegate else { return UncheckedSendableBox(nil) }
        // Sendable: the delegate makes the stream on the delivery target; only the load reads it afterwards.
        let stream = await self.call(default: UncheckedSendableBox<InputStream?>(nil)) { delegate in
            UncheckedSendableBox(
                (delegate as? any URLConnectionDataDelegate)?.connection(self, needNewBodyStream: request)
            )
        }
        return stream
    }

    func loadDidSendBodyData(bytesWritten: Int, totalBytesWritten: Int, totalBytesExpectedToWrite: Int) {
        guard self.hasDataDelegate else { return }
        self.postData { delegate in
            delegate.connection(
                self,
                didSendBodyData: bytesWritten,
                totalBytesWritten: totalBytesWritten,
                totalBytesExpectedToWrite: totalBytesExpectedToWrite
            )
        }
    }

    func loadDidReceive(_ response: HTTPURLResponse) async throws {
        guard self.hasDataDelegate else { return }
        self.submit(.response(response))
    }

    func loadDidReceive(_ data: ByteBuffer) async throws {
        guard self.hasDataDelegate else { return }
        let count = data.readableBytes
        // Large chunks are handed over without a copy: the Data keeps the engine's buffer alive instead (a copy
        // per chunk cost a fresh page fault per 4 KiB on a 200 MiB download); small ones are copied.
        let bytes = data.getData(
            at: data.readerIndex,
            length: count,
            byteTransferStrategy: count >= 4096 ? .noCopy : .copy
        )!
        await self.window.reserve(count)
        self.submit(.data(bytes))
    }

    func loadWillCache(_ cachedResponse: CachedURLResponse) async -> CachedURLResponse? {
        guard self.hasDataDelegate else { return cachedResponse }
        // Sendable: the cached response is handed to the delegate, then back; one side holds it at a time.
        let proposed = UncheckedSendableBox(cachedResponse)
        let decided = await self.call(default: UncheckedSendableBox<CachedURLResponse?>(nil)) { delegate in
            guard let dataDelegate = delegate as? any URLConnectionDataDelegate else {
                return UncheckedSendableBox<CachedURLResponse?>(proposed.value)
            }
            return UncheckedSendableBox(dataDelegate.connection(self, willCacheResponse: proposed.value))
        }
        return decided.value
    }

    func loadDidCollect(_ metrics: URLConnectionMetrics) {
        self.submit(.metrics(metrics))
    }

    func loadDidFinish() async {
        self.submit(.finish)
    }

    func loadDidFail(_ error: URLError) async {
        self.submit(.failure(error))
    }

    func loadDidStopSilently() {
        self.terminate()
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherConcurrency

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPLoad {
    func makeBody(
        for request: URLRequest,
        sendIndex: Int,
        headers: HTTPHeaders,
        context: LoadContext
    )
        async throws -> HTTPClient.Body?
    {
        let progress: RequestBodySequence.Progress = {
            [observer = self.observer, watchdog = context.watchdog, metrics = context.metrics] in
            watchdog?.touch()
            metrics?.sentBody(total: $1)
            observer.loadDidSendBodyData(bytesWritten: $0, totalBytesWritten: $1, totalBytesExpectedToWrite: $2)
        }
        if let data = request.httpBody {
            guard !data.isEmpty else { return nil }
            let sequence = RequestBodySequence(source: .data(data), expectedLength: data.count, progress: progress)
            return self.streamedBody(sequence, length: data.count)
        }
        guard var stream = request.httpBodyStream else { return nil }
        if sendIndex > 0 || context.didUseBodyStream {
            let box = await context.paused { await self.observer.loadNeedsNewBodyStream(request) }
            guard let fresh = box.value else {
                throw URLError.tether(.requestBodyStreamExhausted, url: request.url)
            }
            stream = fresh
        }
        context.didUseBodyStream = true
        let length = headers.first(name: "Content-Length").flatMap { Int($0) }
        let sequence = RequestBodySequence(source: .stream(stream), expectedLength: length ?? -1, progress: progress)
        return self.streamedBody(sequence, length: length)
    }

    /// A body that the engine streams from `sequence`, `length` bytes long (nil: unknown, sent chunked). The
    /// sequence is read in a task of its own, off the event loop (a stream's reads may block), one chunk after the
    /// engine took the previous one; each chunk's progress is reported as it is handed over, before the response
    /// to it can arrive.
    ///
    /// When the length is known, the body's end goes to the engine with its last chunk, on the request's event loop,
    /// not after the task reads on: a server answers once that chunk arrived, and a response that ends before the
    /// engine heard of the body's end finishes the request while its connection stays leased for good
    /// (AsyncHTTPClient's delegate API drops the end that comes later), so every such request would take one of the
    /// host's connections with it.
    private func streamedBody(_ sequence: RequestBodySequence, length: Int?) -> HTTPClient.Body {
        let anyLoop = self.engineGroup.any()
        return .stream(contentLength: length.map { Int64($0) }) { writer in
            // The engine asks for the body on the request's event loop: an end completed there reaches it at once.
            let promise = (MultiThreadedEventLoopGroup.currentEventLoop ?? anyLoop).makePromise(of: Void.self)
            Task {
                var iterator = sequence.makeAsyncIterator()
                do {
                    while let chunk = try await iterator.next() {
                        iterator.reportHandedOver()
                        let written = writer.write(.byteBuffer(chunk))
                        if iterator.hasReachedExpectedLength {
                            iterator.close()
                            promise.completeWith(written)
                            return
                        }
                        try await written.get()
                    }
                    promise.succeed()
                } catch {
                    iterator.close()
                    promise.fail(error)
                }
            }
            return promise.futureResult
        }
    }
}

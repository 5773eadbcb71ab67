import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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
        async throws -> HTTPClientRequest.Body?
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
            return .stream(sequence, length: .known(Int64(data.count)))
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
        return .stream(sequence, length: length.map { .known(Int64($0)) } ?? .unknown)
    }
}

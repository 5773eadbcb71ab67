import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import TetherHTTP

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DemoSteps {
    /// A download that the in-process server cuts mid-body, resumed from its resume data with `Range` and `If-Range`.
    static func httpResumedDownload() async throws -> String {
        let body = (0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(DemoRangeHandler(body: body))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        defer { server.close(promise: nil) }
        guard let port = server.localAddress?.port else { throw HTTPDemoFailure(description: "server has no port") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tether-demo-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("resource.bin")
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/resource.bin")!)
        let configuration = URLConnection.Configuration(responseCache: nil)

        let resumeData: DownloadResumeData
        do {
            _ = try await URLConnection.download(request, to: file, configuration: configuration)
            throw HTTPDemoFailure(description: "the first download was not cut")
        } catch let error as URLError {
            guard let data = error.downloadResumeData else {
                throw HTTPDemoFailure(description: "the cut download left no resume data: \(error)")
            }
            resumeData = data
        }
        let response = try await URLConnection.download(
            request,
            to: file,
            resumingWith: resumeData,
            configuration: configuration
        )
        guard response.statusCode == 206, try Data(contentsOf: file) == Data(body) else {
            throw HTTPDemoFailure(description: "the resumed download is not the resource (HTTP \(response.statusCode))")
        }
        return "cut after \(resumeData.bytesReceived) of \(body.count) bytes; resumed with Range: "
            + "bytes=\(resumeData.bytesReceived)- and If-Range \(resumeData.validator.ifRangeValue): HTTP 206, "
            + "the file is the resource byte for byte"
    }
}

@available(*, unavailable)
extension DemoRangeHandler: Sendable {}

/// Serves one body with a strong ETag: a whole GET is cut after its first 100 KiB (the connection closes); a
/// `Range: bytes=N-` whose `If-Range` matches gets the rest as a 206.
private final class DemoRangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let etag = "\"tether-demo-resource\""
    private let body: [UInt8]
    private var head: HTTPRequestHead?

    init(body: [UInt8]) {
        self.body = body
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = self.unwrapInboundIn(data) else {
            if case .head(let head) = self.unwrapInboundIn(data) { self.head = head }
            return
        }
        guard let head = self.head else { return }
        self.head = nil
        var headers = HTTPHeaders([("ETag", Self.etag)])
        let range = head.headers.first(name: "Range")
        if let range, head.headers.first(name: "If-Range") == Self.etag, range.hasPrefix("bytes="),
            range.hasSuffix("-"),
            let first = Int(range.dropFirst(6).dropLast()), first < self.body.count
        {
            headers.add(name: "Content-Range", value: "bytes \(first)-\(self.body.count - 1)/\(self.body.count)")
            headers.add(name: "Content-Length", value: "\(self.body.count - first)")
            context.write(
                self.wrapOutboundOut(
                    .head(HTTPResponseHead(version: head.version, status: .partialContent, headers: headers))
                ),
                promise: nil
            )
            context.write(
                self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: self.body[first...])))),
                promise: nil
            )
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        headers.add(name: "Content-Length", value: "\(self.body.count)")
        context.write(
            self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .ok, headers: headers))),
            promise: nil
        )
        let channel = context.channel
        context.writeAndFlush(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: self.body.prefix(100 << 10))))))
            .whenComplete { _ in channel.close(promise: nil) }
    }
}

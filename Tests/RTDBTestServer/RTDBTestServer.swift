import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A Realtime Database REST server for tests: an `RTDBDatabase` behind HTTP/1.1 on 127.0.0.1 and
/// an ephemeral port, with faults that tests inject and a log of the requests it answered.
///
/// The test that starts a server stops it (`stop()`); nothing listens beyond loopback.
public final class RTDBTestServer: Sendable {
    /// A fault served instead of (or after) the normal answer to one request.
    public enum Fault: Sendable, Equatable {
        /// `503 Service Unavailable`, nothing applied ("the specified Realtime Database is
        /// temporarily unavailable", REST reference, "Error Conditions").
        case serviceUnavailable
        /// The request is applied, then the answer is held back for this many milliseconds.
        case stall(milliseconds: Int64)
        /// The connection is closed before the request is applied.
        case dropConnection
        /// The request is applied, then the connection is closed without an answer.
        case dropConnectionAfterApplying
    }

    /// A request the server received, as the log keeps it.
    public struct LoggedRequest: Sendable {
        public var method: String
        public var path: [String]
        public var query: [String: String]
        public var bodyBytes: Int
        /// The status answered, or `nil` when a fault dropped the connection.
        public var status: Int?
    }

    public let database: RTDBDatabase
    public let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state: NIOLockedValueBox<State>

    fileprivate struct State {
        var faults: [(method: String?, skip: Int, fault: Fault)] = []
        var log: [LoggedRequest] = []
    }

    /// Starts a server on 127.0.0.1 and a port the system picks.
    public init(configuration: RTDBDatabase.Configuration = .init()) throws {
        let database = RTDBDatabase(configuration: configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.database = database
        self.group = group
        let box = NIOLockedValueBox(State())
        state = box
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(database: database, state: box))
                }
            }
        do {
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    /// `http://127.0.0.1:PORT`, the value for `FIREBASE_DATABASE_EMULATOR_HOST` without the scheme.
    public var host: String { "127.0.0.1:\(port)" }

    /// Closes the listening socket and every connection.
    public func stop() throws {
        try? channel.close().wait()
        try group.syncShutdownGracefully()
    }

    /// Queues faults for the next requests (of `method`, or any), after `skipping` such requests
    /// answered normally; each fault is used once, in order.
    public func injectFaults(_ faults: [Fault], method: String? = nil, skipping: Int = 0) {
        state.withLockedValue { s in
            for (i, fault) in faults.enumerated() { s.faults.append((method, i == 0 ? skipping : 0, fault)) }
        }
    }

    /// The requests answered so far, in order.
    public var requests: [LoggedRequest] { state.withLockedValue { $0.log } }
}

extension RTDBTestServer {
    fileprivate typealias Box = NIOLockedValueBox<State>

    /// Collects one request, asks the database, and writes the answer (or the fault).
    fileprivate final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let database: RTDBDatabase
        private let state: Box
        private var head: HTTPRequestHead?
        private var body: [UInt8] = []

        init(database: RTDBDatabase, state: Box) {
            self.database = database
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let h):
                head = h
                body.removeAll(keepingCapacity: true)
            case .body(var buffer):
                body += buffer.readBytes(length: buffer.readableBytes) ?? []
            case .end:
                guard let head else { return }
                self.head = nil
                serve(context: context, head: head)
            }
        }

        private func serve(context: ChannelHandlerContext, head: HTTPRequestHead) {
            let method = head.method.rawValue
            guard
                let request = RESTRequest(
                    method: method, target: head.uri,
                    authorization: head.headers.first(name: "authorization"), body: body)
            else {
                let response = RESTResponse.error(404, "Not found: REST paths end in .json")
                log(RESTRequest(method: method, path: [], query: [:], body: body), status: 404)
                write(response, context: context, keepAlive: head.isKeepAlive)
                return
            }
            let fault: Fault? = state.withLockedValue { s in
                guard let i = s.faults.firstIndex(where: { $0.method == nil || $0.method == method }) else { return nil }
                if s.faults[i].skip > 0 {
                    s.faults[i].skip -= 1
                    return nil
                }
                return s.faults.remove(at: i).fault
            }
            switch fault {
            case .serviceUnavailable?:
                log(request, status: 503)
                write(.error(503, "Service Unavailable"), context: context, keepAlive: head.isKeepAlive)
            case .dropConnection?:
                log(request, status: nil)
                context.close(promise: nil)
            case .dropConnectionAfterApplying?:
                _ = database.handle(request)
                log(request, status: nil)
                context.close(promise: nil)
            case .stall(let ms)?:
                let response = database.handle(request)
                log(request, status: response.status)
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let keepAlive = head.isKeepAlive
                context.eventLoop.scheduleTask(in: .milliseconds(ms)) {
                    let (handler, context) = bound.value
                    handler.write(response, context: context, keepAlive: keepAlive)
                }
            case nil:
                let response = database.handle(request)
                log(request, status: response.status)
                write(response, context: context, keepAlive: head.isKeepAlive)
            }
        }

        private func log(_ request: RESTRequest, status: Int?) {
            let entry = LoggedRequest(
                method: request.method, path: request.path, query: request.query,
                bodyBytes: request.body.count, status: status)
            state.withLockedValue { $0.log.append(entry) }
        }

        private func write(_ response: RESTResponse, context: ChannelHandlerContext, keepAlive: Bool) {
            guard context.channel.isActive else { return }
            var headers = HTTPHeaders()
            headers.add(name: "content-length", value: String(response.body.count))
            if !response.body.isEmpty { headers.add(name: "content-type", value: "application/json; charset=utf-8") }
            if !keepAlive { headers.add(name: "connection", value: "close") }
            let status = HTTPResponseStatus(statusCode: response.status)
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            }
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !keepAlive {
                let channel = context.channel
                done.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}

#if os(Linux)
/// Entry points into the netlink back-end's parsers of kernel messages, for the libFuzzer targets in `Fuzz/`
/// (`@_spi(Fuzzing) import TetherReachability`). Each calls the code the monitor runs, unchanged. Not for
/// applications: this interface may change at any time.
@_spi(Fuzzing)
public enum NetlinkParsing {
    /// One message of a datagram: the `nlmsghdr` fields and the payload after the header.
    public struct Message: Sendable, Hashable {
        /// `nlmsg_type`.
        public var type: UInt16
        /// `nlmsg_flags`.
        public var flags: UInt16
        /// `nlmsg_seq`.
        public var sequence: UInt32
        /// `nlmsg_pid`.
        public var portID: UInt32
        /// The bytes after the header, without the padding.
        public var payload: [UInt8]

        fileprivate init(_ message: NetlinkMessage) {
            self.type = message.type
            self.flags = message.flags
            self.sequence = message.sequence
            self.portID = message.portID
            self.payload = message.payload
        }

        fileprivate var internalMessage: NetlinkMessage {
            NetlinkMessage(type: type, flags: flags, sequence: sequence, portID: portID, payload: payload)
        }
    }

    /// What a session made of a run of messages.
    public struct SessionResult: Sendable, Hashable {
        /// The hash of the reachability change each message carries (stable within a process); nil for a message
        /// that carries none.
        public var changes: [Int?]
        /// The dump requests the session sent, in order.
        public var requests: [Message]
        /// The default route's path.
        public var defaultRoute: NetworkPath
        /// The paths to the first eight addresses the messages name.
        public var addresses: [NetworkPath]
        /// Whether every dump finished.
        public var isSynchronised: Bool
    }

    /// The messages of one datagram; a truncated tail is ignored.
    public static func messages(in datagram: [UInt8]) -> [Message] {
        NetlinkMessage.parse(datagram).map(Message.init)
    }

    /// `message` as bytes on the wire (header, payload, padding).
    public static func encode(_ message: Message) -> [UInt8] {
        message.internalMessage.encoded()
    }

    /// The route attributes in `bytes` from `offset` by type (flag bits cleared); malformed tails are ignored.
    public static func attributes(in bytes: [UInt8], from offset: Int) -> [UInt16: [UInt8]] {
        NetlinkAttributes(parsing: bytes, from: offset).values
    }

    /// `attributes` encoded in order of type.
    public static func encode(attributes: [UInt16: [UInt8]]) -> [UInt8] {
        NetlinkAttributes(attributes).encoded()
    }

    /// Runs a session bound to `portID` that requested a full dump over `messages`, then evaluates the default
    /// route and the path to every address the messages name (interfaces classified as wired).
    public static func runSession(_ messages: [Message], portID: UInt32) -> SessionResult {
        var session = NetlinkSession(portID: portID)
        var requests = session.requestFullDump()
        var changes: [Int?] = []
        var destinations: [IPAddressBytes] = []
        for message in messages {
            let change = RoutingChange(message.internalMessage)
            changes.append(change?.hashValue)
            switch change {
            case .address(let address), .addressRemoved(let address): destinations.append(address.address)
            case .route(let route, _), .routeRemoved(let route):
                destinations += [route.destination].compactMap { $0 } + route.nextHops.compactMap(\.gateway)
            default: break
            }
            requests += session.receive(message.internalMessage).actions
        }
        let classify: (RoutingState.Link) -> NetworkPath.InterfaceType = { _ in .wiredEthernet }
        return SessionResult(
            changes: changes,
            requests: requests.map { action in
                switch action {
                case .send(let message): Message(message)
                }
            },
            defaultRoute: session.state.evaluate(.defaultRoute, classify: classify),
            addresses: destinations.prefix(8).map { session.state.evaluate(.addresses([$0]), classify: classify) },
            isSynchronised: session.isSynchronised
        )
    }
}
#endif

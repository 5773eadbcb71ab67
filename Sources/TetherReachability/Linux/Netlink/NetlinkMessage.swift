#if os(Linux)
import CTetherNetlink

/// One netlink message: the `nlmsghdr` fields and the payload after the header.
struct NetlinkMessage: Sendable, Hashable {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var portID: UInt32
    var payload: [UInt8]

    /// The messages in one datagram received from a netlink socket; a truncated tail is ignored.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [NetlinkMessage] {
        guard let base = bytes.baseAddress, bytes.count >= Int(tether_nlmsg_hdrlen()) else { return [] }
        var messages: [NetlinkMessage] = []
        var remaining = Int32(clamping: bytes.count)
        var header: UnsafePointer<nlmsghdr>? = base.assumingMemoryBound(to: nlmsghdr.self)
        while let current = header, tether_nlmsg_ok(current, remaining) != 0 {
            let length = Int(current.pointee.nlmsg_len) - Int(tether_nlmsg_hdrlen())
            let data = UnsafeRawPointer(tether_nlmsg_data(current)!)
            messages.append(
                NetlinkMessage(
                    type: current.pointee.nlmsg_type,
                    flags: current.pointee.nlmsg_flags,
                    sequence: current.pointee.nlmsg_seq,
                    portID: current.pointee.nlmsg_pid,
                    payload: Array(UnsafeRawBufferPointer(start: data, count: length))
                )
            )
            header = tether_nlmsg_next(current, &remaining)
        }
        return messages
    }

    /// The messages in `bytes` (a recorded datagram).
    static func parse(_ bytes: [UInt8]) -> [NetlinkMessage] {
        bytes.withUnsafeBytes { raw in
            // Copy into storage aligned for `nlmsghdr`: an array's bytes are, a slice's need not be.
            let aligned = UnsafeMutableRawBufferPointer.allocate(byteCount: raw.count, alignment: 8)
            defer { aligned.deallocate() }
            aligned.copyMemory(from: raw)
            return parse(UnsafeRawBufferPointer(aligned))
        }
    }

    /// The message as bytes on the wire: the header, then the payload padded to the netlink alignment.
    func encoded() -> [UInt8] {
        let headerLength = Int(tether_nlmsg_hdrlen())
        let length = headerLength + payload.count
        var header = nlmsghdr(
            nlmsg_len: UInt32(length),
            nlmsg_type: type,
            nlmsg_flags: flags,
            nlmsg_seq: sequence,
            nlmsg_pid: portID
        )
        var bytes = withUnsafeBytes(of: &header) { Array($0) }
        bytes += [UInt8](repeating: 0, count: headerLength - bytes.count)
        bytes += payload
        bytes += [UInt8](repeating: 0, count: Int(tether_nlmsg_align(UInt32(length))) - length)
        return bytes
    }
}

/// Route attributes (`rtattr`) of a message, by type.
struct NetlinkAttributes: Sendable, Hashable {
    private(set) var values: [UInt16: [UInt8]] = [:]

    init(_ values: [UInt16: [UInt8]] = [:]) {
        self.values = values
    }

    /// Parses the attributes in `bytes` starting at `offset`; malformed tails are ignored.
    init(parsing bytes: [UInt8], from offset: Int) {
        guard offset < bytes.count else { return }
        bytes.withUnsafeBytes { raw in
            let aligned = UnsafeMutableRawBufferPointer.allocate(byteCount: raw.count - offset, alignment: 8)
            defer { aligned.deallocate() }
            aligned.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[offset...]))
            var remaining = Int32(clamping: aligned.count)
            var attribute: UnsafePointer<rtattr>? = UnsafeRawPointer(aligned.baseAddress!)
                .assumingMemoryBound(to: rtattr.self)
            while let current = attribute, tether_rta_ok(current, remaining) != 0 {
                let data = UnsafeRawPointer(tether_rta_data(current)!)
                let count = Int(tether_rta_payload(current))
                // The top bits mark nested and network-byte-order attributes (NLA_F_NESTED, NLA_F_NET_BYTEORDER).
                values[current.pointee.rta_type & 0x3FFF] = Array(UnsafeRawBufferPointer(start: data, count: count))
                attribute = tether_rta_next(current, &remaining)
            }
        }
    }

    subscript(type: UInt16) -> [UInt8]? { values[type] }

    func uint32(_ type: UInt16) -> UInt32? {
        guard let bytes = values[type], bytes.count >= 4 else { return nil }
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    func string(_ type: UInt16) -> String? {
        guard let bytes = values[type] else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The attributes encoded in order of type, each padded to the attribute alignment.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        for (type, value) in values.sorted(by: { $0.key < $1.key }) {
            bytes += Self.encode(type: type, value: value)
        }
        return bytes
    }

    static func encode(type: UInt16, value: [UInt8]) -> [UInt8] {
        let length = Int(tether_rta_length(UInt32(value.count)))
        var header = rtattr(rta_len: UInt16(length), rta_type: type)
        var bytes = withUnsafeBytes(of: &header) { Array($0) }
        bytes += value
        bytes += [UInt8](repeating: 0, count: Int(tether_rta_align(UInt32(length))) - length)
        return bytes
    }
}
#endif

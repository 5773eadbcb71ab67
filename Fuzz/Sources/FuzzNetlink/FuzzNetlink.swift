import FuzzSupport
@_spi(Fuzzing) import TetherReachability

/// Input: one datagram as read from an `NETLINK_ROUTE` socket (replies to the session's dumps carry port ID
/// ``portID`` and sequence numbers 1–3).
@main
enum FuzzNetlink {
    static func main() {
        runFuzzer(fuzzNetlink)
    }
}

/// The port ID the fuzzed session is bound to.
let portID: UInt32 = 0x1234
/// `RTM_NEWLINK`, `RTM_DELLINK`, `RTM_NEWADDR`, `RTM_DELADDR`, `RTM_NEWROUTE`, `RTM_DELROUTE`, `RTM_NEWRULE`,
/// `RTM_DELRULE`.
let routingTypes: Set<UInt16> = [16, 17, 20, 21, 24, 25, 32, 33]
/// Where the attributes start after `ifinfomsg`, `ifaddrmsg` and `rtmsg` (a rule's `fib_rule_hdr` is as long).
let attributeOffsets = [16, 8, 12]

func fuzzNetlink(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let datagram = FuzzInput(data, size).rest
    let messages = NetlinkParsing.messages(in: datagram)
    require(NetlinkParsing.messages(in: datagram) == messages, "parsing twice differs")
    require(messages.count <= datagram.count / 16, "more messages than headers fit")

    // Each message is the datagram's bytes at its aligned offset, and the messages encoded parse to themselves.
    var offset = 0
    var encoded: [UInt8] = []
    for message in messages {
        let length = 16 + message.payload.count
        require(offset + length <= datagram.count, "a message extends past the datagram")
        let bytes = NetlinkParsing.encode(message)
        require(bytes.count == (length + 3) & ~3, "encoded length is not the aligned length")
        require(bytes.prefix(length).elementsEqual(datagram[offset..<(offset + length)]), "message bytes differ")
        offset += (length + 3) & ~3
        encoded += bytes
    }
    require(NetlinkParsing.messages(in: encoded) == messages, "the messages encoded parse differently")

    // Attributes, wherever a message kind puts them, are bounded by the payload and round-trip.
    for message in messages.prefix(8) {
        for start in attributeOffsets {
            let attributes = NetlinkParsing.attributes(in: message.payload, from: start)
            let total = attributes.values.reduce(0) { $0 + 4 + $1.count }
            require(total <= max(0, message.payload.count - start), "attributes longer than the payload")
            let again = NetlinkParsing.attributes(in: NetlinkParsing.encode(attributes: attributes), from: 0)
            require(again == attributes, "attributes encoded parse differently")
        }
    }

    // A session over the messages: deterministic, changes only from routing messages, one request at most per
    // message after the first.
    let result = NetlinkParsing.runSession(messages, portID: portID)
    require(NetlinkParsing.runSession(messages, portID: portID) == result, "running the session twice differs")
    require(result.changes.count == messages.count, "not one change slot per message")
    for (message, change) in zip(messages, result.changes) where change != nil {
        require(routingTypes.contains(message.type), "a change from message type \(message.type)")
    }
    require(result.requests.count <= 1 + messages.count, "more dump requests than messages")
    for request in result.requests {
        require(request.portID == portID || request.portID == 0, "a request from another port")
    }
    return 0
}

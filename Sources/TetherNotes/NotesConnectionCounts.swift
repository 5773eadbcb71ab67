/// The connections a server holds, by client address and by user, against its ``NotesServerLimits``: a value type
/// with no I/O, kept behind a lock by ``NotesServer``.
struct NotesConnectionCounts {
    private(set) var total = 0
    private var byAddress: [String: Int] = [:]
    private var byUser: [String: Int] = [:]

    /// A connection from `address` arrives: false (and nothing counted) when the total or the address's count is at
    /// its limit.
    mutating func admit(_ address: String, limits: NotesServerLimits) -> Bool {
        guard total < limits.connections, byAddress[address, default: 0] < limits.connectionsPerAddress else {
            return false
        }
        total += 1
        byAddress[address, default: 0] += 1
        return true
    }

    /// An admitted connection authenticated as `user`: false (and nothing counted) when the user is at the limit.
    mutating func bind(_ user: String, limits: NotesServerLimits) -> Bool {
        guard byUser[user, default: 0] < limits.connectionsPerUser else { return false }
        byUser[user, default: 0] += 1
        return true
    }

    /// An admitted connection from `address`, bound to `user` if it was, ended.
    mutating func release(_ address: String, user: String?) {
        total -= 1
        byAddress[address, default: 1] -= 1
        if byAddress[address] == 0 { byAddress[address] = nil }
        if let user {
            byUser[user, default: 1] -= 1
            if byUser[user] == 0 { byUser[user] = nil }
        }
    }

    /// The connections from `address`.
    func count(from address: String) -> Int { byAddress[address, default: 0] }

    /// The connections bound to `user`.
    func count(of user: String) -> Int { byUser[user, default: 0] }
}

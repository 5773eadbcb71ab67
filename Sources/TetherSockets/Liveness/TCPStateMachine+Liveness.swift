extension TCPStateMachine {
    /// The connection has not come up yet (a close now means it never did).
    var isWaitingForChannel: Bool {
        if case .waitingForChannel = phase { return true }
        return false
    }
}

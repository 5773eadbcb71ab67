public import Foundation

extension AsyncSocket {
    /// Does nothing: pre-buffering is always on (the original's default, `DEFAULT_PREBUFFERING YES`), so a
    /// separator read never loses a byte after its separator, and there is no way to turn it off.
    public func enablePreBuffering() {}

    /// Moves the socket's callbacks to `runLoop`. Must be called on the socket's current run loop thread (or before
    /// the socket has one): returns false otherwise. Every callback not yet run goes too: called from a callback, the
    /// next callback (the rest of those already queued included) runs on `runLoop`, once this one has returned.
    public func moveToRunLoop(_ runLoop: RunLoop) -> Bool {
        if let current = mailbox.runLoop, current !== RunLoop.current { return false }
        if mailbox.runLoop === runLoop { return true }
        mailbox.move(to: runLoop)
        return true
    }

    /// The run loop modes callbacks run in, from the next callback on (those already queued included); false
    /// (nothing changes) for an empty array.
    public func setRunLoopModes(_ runLoopModes: [RunLoop.Mode]) -> Bool {
        guard !runLoopModes.isEmpty else { return false }
        mailbox.modes = runLoopModes
        return true
    }

    /// Adds a mode callbacks run in; true when it is (already) there.
    public func addRunLoopMode(_ runLoopMode: RunLoop.Mode) -> Bool {
        var modes = mailbox.modes
        if !modes.contains(runLoopMode) { modes.append(runLoopMode) }
        mailbox.modes = modes
        return true
    }

    /// Removes a mode; false when it is the last one (Δ: the original scheduled instead of unscheduling here).
    public func removeRunLoopMode(_ runLoopMode: RunLoop.Mode) -> Bool {
        var modes = mailbox.modes
        guard let index = modes.firstIndex(of: runLoopMode) else { return true }
        guard modes.count > 1 else { return false }
        modes.remove(at: index)
        mailbox.modes = modes
        return true
    }

    /// The modes callbacks run in; `[.default]` unless changed.
    public func runLoopModes() -> [RunLoop.Mode] {
        mailbox.modes
    }
}

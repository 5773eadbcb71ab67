import Foundation

/// The caller's `NSMutableData` and offset, carried to the event loop and back.
final class CallerBuffer {
    let data: NSMutableData
    let offset: Int
    init(data: NSMutableData, offset: Int) {
        self.data = data
        self.offset = offset
    }
}

// Sendable: the caller hands its buffer over for the read's lifetime (as the original documents); only the event
// loop and then the delegate queue touch it, one after the other.
extension CallerBuffer: @unchecked Sendable {}

#if os(Linux)
import Foundation
import Glibc

/// A run-loop source that an `eventfd` signals: a version-1 `CFRunLoopSource` whose port is the descriptor. Writing
/// to the descriptor wakes the run loop from any thread (one `write`); the run loop reads it (Core Foundation
/// acknowledges a woken descriptor itself) and calls ``perform`` on its own thread.
///
/// swift-corelibs-foundation gives Swift no way to add a descriptor to a run loop (`RunLoop.getCFRunLoop()` is not
/// public there, and Core Foundation is not a supported module on Linux), so the few Core Foundation functions used
/// here are looked up by name in the process (`dlsym`). Where one is missing, ``install(fd:modes:perform:)`` returns
/// nil and the caller keeps waking the run loop with its timer.
///
/// Made on the run loop's thread (it finds the run loop with `CFRunLoopGetCurrent`); ``invalidate()`` from anywhere.
final class RunLoopFileSource {
    private typealias GetCurrent = @convention(c) () -> UnsafeMutableRawPointer?
    private typealias SourceCreate =
        @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
    private typealias AddSource =
        @convention(c) (UnsafeMutableRawPointer, UnsafeMutableRawPointer, UnsafeRawPointer)
        -> Void
    private typealias Invalidate = @convention(c) (UnsafeMutableRawPointer) -> Void
    private typealias Release = @convention(c) (UnsafeRawPointer) -> Void
    private typealias StringCreate =
        @convention(c) (UnsafeRawPointer?, UnsafePointer<CChar>, UInt32) -> UnsafeRawPointer?
    private typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

    /// The Core Foundation functions, found once; nil when any is missing.
    // Sendable: immutable C function pointers and the address of an immutable Core Foundation constant.
    private struct Functions: @unchecked Sendable {
        var getCurrent: GetCurrent
        var create: SourceCreate
        var add: AddSource
        var invalidate: Invalidate
        var release: Release
        var stringCreate: StringCreate
        var eventfd: EventFD
        /// `kCFRunLoopCommonModes`: Core Foundation compares this mode by pointer.
        var commonModes: UnsafeRawPointer

        static let shared: Functions? = {
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
                return unsafeBitCast(address, to: type)
            }
            guard let getCurrent = symbol("CFRunLoopGetCurrent", as: GetCurrent.self),
                let create = symbol("CFRunLoopSourceCreate", as: SourceCreate.self),
                let add = symbol("CFRunLoopAddSource", as: AddSource.self),
                let invalidate = symbol("CFRunLoopSourceInvalidate", as: Invalidate.self),
                let release = symbol("CFRelease", as: Release.self),
                let stringCreate = symbol("CFStringCreateWithCString", as: StringCreate.self),
                let eventfd = symbol("eventfd", as: EventFD.self),
                let common = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "kCFRunLoopCommonModes"),
                let commonModes = common.load(as: UnsafeRawPointer?.self)
            else { return nil }
            return Functions(
                getCurrent: getCurrent,
                create: create,
                add: add,
                invalidate: invalidate,
                release: release,
                stringCreate: stringCreate,
                eventfd: eventfd,
                commonModes: commonModes
            )
        }()
    }

    /// What the source calls on the run loop's thread; the source holds it (Core Foundation retains `info`).
    private final class Target {
        let fd: Int32
        let perform: () -> Void

        init(fd: Int32, perform: @escaping () -> Void) {
            self.fd = fd
            self.perform = perform
        }
    }

    /// The eventfd that signals the source.
    let fd: Int32
    private let source: UnsafeMutableRawPointer
    private let functions: Functions

    private init(fd: Int32, source: UnsafeMutableRawPointer, functions: Functions) {
        self.fd = fd
        self.source = source
        self.functions = functions
    }

    /// On the run loop's thread: a source added to the current run loop in `modes` that calls `perform` there each
    /// time its descriptor is written; nil when the process's Foundation offers no way to make one.
    static func install(modes: [RunLoop.Mode], perform: @escaping () -> Void) -> RunLoopFileSource? {
        guard let functions = Functions.shared, let runLoop = functions.getCurrent() else { return nil }
        let fd = functions.eventfd(0, O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        let target = Unmanaged.passRetained(Target(fd: fd, perform: perform))
        defer { target.release() }
        guard let source = makeSource(info: target.toOpaque(), functions: functions) else {
            close(fd)
            return nil
        }
        for mode in modes {
            if mode == .common {
                functions.add(runLoop, source, functions.commonModes)
            } else if let name = functions.stringCreate(nil, mode.rawValue, 0x0800_0100) {
                functions.add(runLoop, source, name)
                functions.release(name)
            }
        }
        return RunLoopFileSource(fd: fd, source: source, functions: functions)
    }

    /// A `CFRunLoopSourceContext1` (nine words: version, info, retain, release, copyDescription, equal, hash,
    /// getPort, perform) handed to `CFRunLoopSourceCreate`, which copies it.
    private static func makeSource(info: UnsafeMutableRawPointer, functions: Functions) -> UnsafeMutableRawPointer? {
        let retain: @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer? = { info in
            guard let info else { return nil }
            _ = Unmanaged<Target>.fromOpaque(info).retain()
            return info
        }
        let release: @convention(c) (UnsafeRawPointer?) -> Void = { info in
            guard let info else { return }
            Unmanaged<Target>.fromOpaque(info).release()
        }
        let getPort: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { info in
            guard let info else { return -1 }
            return Unmanaged<Target>.fromOpaque(info).takeUnretainedValue().fd
        }
        let perform: @convention(c) (UnsafeMutableRawPointer?) -> Void = { info in
            guard let info else { return }
            Unmanaged<Target>.fromOpaque(info).takeUnretainedValue().perform()
        }
        let word = MemoryLayout<UnsafeRawPointer>.stride
        let context = UnsafeMutableRawPointer.allocate(byteCount: 9 * word, alignment: word)
        defer { context.deallocate() }
        context.initializeMemory(as: UInt8.self, repeating: 0, count: 9 * word)
        context.storeBytes(of: 1, toByteOffset: 0, as: Int.self)
        context.storeBytes(of: UnsafeRawPointer(info), toByteOffset: word, as: UnsafeRawPointer.self)
        context.storeBytes(
            of: unsafeBitCast(retain, to: UnsafeRawPointer.self),
            toByteOffset: 2 * word,
            as: UnsafeRawPointer.self
        )
        context.storeBytes(
            of: unsafeBitCast(release, to: UnsafeRawPointer.self),
            toByteOffset: 3 * word,
            as: UnsafeRawPointer.self
        )
        context.storeBytes(
            of: unsafeBitCast(getPort, to: UnsafeRawPointer.self),
            toByteOffset: 7 * word,
            as: UnsafeRawPointer.self
        )
        context.storeBytes(
            of: unsafeBitCast(perform, to: UnsafeRawPointer.self),
            toByteOffset: 8 * word,
            as: UnsafeRawPointer.self
        )
        return functions.create(nil, 0, context)
    }

    /// Wakes the run loop: one write of the descriptor (the run loop reads it before calling ``perform``).
    func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    /// Removes the source from every run loop and closes the descriptor. Nothing may signal it afterwards.
    func invalidate() {
        functions.invalidate(source)
        functions.release(source)
        close(fd)
    }
}
#endif

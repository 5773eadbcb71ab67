/// Switches for the benchmarks only (`@_spi(Benchmarks) import TetherSockets`): they turn off an optimisation to
/// measure what it is worth. Not for applications.
@_spi(Benchmarks)
public enum BenchmarkSwitches {
    /// Whether UDP sends may go straight to the kernel from the sending thread (default true). Set it while no
    /// UDP socket exists.
    public static var udpDirectSends: Bool {
        get { UDPSendGate.directSendsEnabled }
        set { UDPSendGate.directSendsEnabled = newValue }
    }
}

/// The command line: `tether-stress COMMAND [--name value …]`. Each scenario reads the options it knows, with
/// defaults from the reliability issue.
struct StressOptions: Sendable {
    let command: String
    private let values: [String: String]

    init(arguments: [String]) {
        command = arguments.first ?? "help"
        var values: [String: String] = [:]
        var index = 1
        while index < arguments.count {
            let name = arguments[index]
            if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                values[name] = "true"
                index += 1
            }
        }
        self.values = values
    }

    func value(_ name: String) -> String? { values[name] }

    func int(_ name: String, default fallback: Int) -> Int { values[name].flatMap { Int($0) } ?? fallback }

    func double(_ name: String, default fallback: Double) -> Double {
        values[name].flatMap { Double($0) } ?? fallback
    }

    static let usage = """
        usage: tether-stress COMMAND [options]   (loopback only: every socket is on 127.0.0.1)
          tcp   [--connections 10000] [--duration 30] [--batch 500] [--pairing both|gcd-server|listener-server]
          tls   [--connections 1000] [--duration 30] [--batch 100] [--pairing both|gcd-server|listener-server]
          udp   [--duration 30] [--size 64]
          http  [--concurrency 64] [--duration 30]
          soak  [--duration 600] [--interval 10] [--connections 200] [--tls-connections 50]
        Each exits 1 when a frame was lost, duplicated, reordered or corrupted, an HTTP load failed, or the soak failed.
        (Peers: serve-tcp --face gcd|listener [--cert PEM --key PEM], serve-http; started by the tool itself.)
        """
}

/// Whether, and over which kind of interface, the kernel would route a packet to the manager's target.
///
/// The raw values are AFNetworking's `AFNetworkReachabilityStatus` values; `.reachableViaEthernet` is Tether's
/// extension (AFNetworking on macOS reported wired Ethernet as WiFi, see
/// ``NetworkReachabilityManager/reportsEthernetAsWiFi``).
public enum NetworkReachabilityStatus: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not evaluated yet, or the platform back-end could not evaluate (see ``NetworkReachabilityManager/lastError``).
    case unknown = -1
    /// No route to the target over an interface that is up and running.
    case notReachable = 0
    /// Reachable over a cellular (WWAN) interface.
    case reachableViaWWAN = 1
    /// Reachable over a Wi-Fi interface, or over an interface of another kind (AFNetworking's catch-all).
    case reachableViaWiFi = 2
    /// Reachable over wired Ethernet (an extension over AFNetworking).
    case reachableViaEthernet = 3

    /// The English description AFNetworking shows: "Unknown", "Not Reachable", "Reachable via WWAN",
    /// "Reachable via WiFi", or "Reachable via Ethernet".
    public var localizedDescription: String {
        switch self {
        case .unknown: "Unknown"
        case .notReachable: "Not Reachable"
        case .reachableViaWWAN: "Reachable via WWAN"
        case .reachableViaWiFi: "Reachable via WiFi"
        case .reachableViaEthernet: "Reachable via Ethernet"
        }
    }

    /// The same text as ``localizedDescription``.
    public var description: String { localizedDescription }

    /// Whether the status is one of the three reachable statuses.
    public var isReachable: Bool {
        switch self {
        case .reachableViaWWAN, .reachableViaWiFi, .reachableViaEthernet: true
        case .unknown, .notReachable: false
        }
    }
}

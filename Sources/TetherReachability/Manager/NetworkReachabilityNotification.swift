public import Foundation

extension Notification.Name {
    /// Posted on the manager's callback queue after each delivered status change.
    ///
    /// `object` is the ``NetworkReachabilityManager``; `userInfo[NetworkReachabilityNotificationStatusItem]` is the
    /// new ``NetworkReachabilityStatus``'s `rawValue` as an `Int` (AFNetworking's
    /// `AFNetworkingReachabilityDidChangeNotification`).
    public static let networkReachabilityDidChange = Notification.Name("tether.networking.reachability.change")
}

/// The `userInfo` key of ``Foundation/NSNotification/Name/networkReachabilityDidChange`` under which the status's
/// `rawValue` (an `Int`) is posted (AFNetworking's `AFNetworkingReachabilityNotificationStatusItem`).
public let NetworkReachabilityNotificationStatusItem: String = "NetworkReachabilityNotificationStatusItem"

/// The NSError domain of the RunLoop-era TCP face's own errors (``AsyncSocketError``).
public let AsyncSocketErrorDomain = "AsyncSocketErrorDomain"

/// The NSError domain of the RunLoop-era UDP face's own errors (``AsyncUdpSocketError``).
public let AsyncUdpSocketErrorDomain = "AsyncUdpSocketErrorDomain"

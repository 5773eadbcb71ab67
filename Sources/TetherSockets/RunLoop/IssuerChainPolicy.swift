import SwiftASN1
import X509

/// The structural rules the RunLoop face's evaluation checks on a chain that signatures tie to a trust root: every
/// issuer is a certificate authority. Validity dates are checked apart (so that a refusal can say "expired"), and
/// the names by the evaluator itself.
struct IssuerChainPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
        .X509ExtensionID.subjectAlternativeName,
    ]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        for issuer in chain.dropFirst() {
            let constraints = (try? issuer.extensions.basicConstraints) ?? nil
            guard case .isCertificateAuthority = constraints else {
                return .failsToMeetPolicy(reason: "an issuer is not a certificate authority")
            }
        }
        return .meetsPolicy
    }
}

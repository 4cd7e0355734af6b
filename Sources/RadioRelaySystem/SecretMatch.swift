/// Whether `candidate` equals `secret`, in time that depends on their lengths only, never on where they differ (a
/// token, a password).
package func secretMatches(_ secret: [UInt8], _ candidate: some Collection<UInt8>) -> Bool {
    guard !secret.isEmpty else { return candidate.isEmpty }
    var difference = candidate.count ^ secret.count
    var index = 0
    for byte in candidate {
        difference |= Int(byte ^ secret[index % secret.count])
        index += 1
    }
    return difference == 0
}

import Foundation
import RadioRelay
import RadioRelayMedia
import RadioRelayNet
import RadioRelaySystem

/// The corpus replay every fuzz target runs when it is built without libFuzzer (`.ci/run` does): each file of the
/// directories given (or the files themselves) through the target's checks, one line per failing input, and the
/// summary line `N inputs replayed, M failures` that CI reads.
package enum FuzzReplay {
    /// Runs `check` over the inputs named by `arguments` (default: `defaultRoot`) and exits: 0 when every input
    /// passed, 1 when one failed, 2 when there was nothing to replay.
    package static func run(
        target: String, arguments: [String], defaultRoot: String, check: ([UInt8]) -> [String]
    ) -> Never {
        let roots = arguments.isEmpty ? [defaultRoot] : arguments
        var files: [String] = []
        for root in roots {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
                StandardError.write("\(target): no such file or directory: \(root)\n")
                exit(2)
            }
            guard isDirectory.boolValue else {
                files.append(root)
                continue
            }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
            files += names.sorted().filter { !$0.hasPrefix(".") }.map { root + "/" + $0 }
        }
        guard !files.isEmpty else {
            StandardError.write("\(target): no inputs in \(roots.joined(separator: " "))\n")
            exit(2)
        }
        var failed = 0
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                StandardError.write("\(target): cannot read \(path)\n")
                failed += 1
                continue
            }
            let failures = check(Array(data))
            if !failures.isEmpty {
                failed += 1
                StandardError.write("FAIL \(path) (\(data.count) bytes)\n")
                for failure in failures { StandardError.write("  \(failure)\n") }
            }
        }
        print("\(files.count) inputs replayed, \(failed) failures")
        exit(failed == 0 ? 0 : 1)
    }
}

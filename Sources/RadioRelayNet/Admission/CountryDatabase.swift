import CMaxMindDB
import Glibc
import RadioRelaySystem

/// A MaxMind-format country database (`geoip`: GeoLite2-Country, DB-IP's lite country database, or one of the
/// operator's own), opened with libmaxminddb — memory-mapped, read-only, so lookups from every network loop at once
/// need no lock. None is shipped. It is opened when the configuration is read (a reload opens the file again and the
/// new policy takes it; the old one is closed once no policy holds it).
package final class CountryDatabase: Sendable, CustomStringConvertible {
    /// libmaxminddb's handle, at a stable address for its life.
    private nonisolated(unsafe) let handle: UnsafeMutablePointer<MMDB_s>
    package let path: String
    /// The file as it was opened (device, inode, size, modification time): a reload that finds another file at the
    /// same path counts as a change.
    private let identity: [Int]

    /// Opens `path`; throws with libmaxminddb's reason.
    package init(path: String) throws(CountryDatabaseError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw CountryDatabaseError("\(path): \(String(cString: strerror(errno)))")
        }
        let handle = UnsafeMutablePointer<MMDB_s>.allocate(capacity: 1)
        handle.initialize(to: MMDB_s())
        let opened = MMDB_open(path, UInt32(MMDB_MODE_MMAP), handle)
        guard opened == MMDB_SUCCESS else {
            handle.deallocate()
            throw CountryDatabaseError("\(path): \(String(cString: MMDB_strerror(opened)))")
        }
        self.handle = handle
        self.path = path
        identity = [
            Int(status.st_dev), Int(status.st_ino), Int(status.st_size), Int(status.st_mtim.tv_sec),
            Int(status.st_mtim.tv_nsec),
        ]
    }

    deinit {
        MMDB_close(handle)
        handle.deallocate()
    }

    /// The ISO 3166-1 code (`FR`) of `address`'s country; nil when the database does not know the address (a
    /// private network, loopback) or names no country for it. An IPv4 client seen on a dual-stack socket
    /// (`::ffff:a.b.c.d`) is looked up as IPv4.
    package func country(of address: SocketAddress) -> String? {
        var storage = Self.plain(address).storage
        var code: (CChar, CChar, CChar) = (0, 0, 0)
        let found = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socket in
                withUnsafeMutableBytes(of: &code) { bytes -> Int32 in
                    guard let base = bytes.baseAddress else { return -1 }
                    return radio_relay_mmdb_country(handle, socket, base.assumingMemoryBound(to: CChar.self))
                }
            }
        }
        guard found == 0 else { return nil }
        let letters = [UInt8(bitPattern: code.0), UInt8(bitPattern: code.1)]
        guard letters.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return nil }
        return String(decoding: letters, as: UTF8.self)
    }

    /// An IPv4-mapped IPv6 address as the IPv4 one it is (from its bits, as `AddressRange` reads them: no text
    /// made and parsed again per listener).
    private static func plain(_ address: SocketAddress) -> SocketAddress {
        guard address.family == AF_INET6, let (high, low) = AddressRange.bits(of: address), high == 0,
            low >> 32 == 0xFFFF
        else { return address }
        let v4 = UInt32(truncatingIfNeeded: low)
        return SocketAddress(ip: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v4 >> $0) }, port: 0)
    }

    package var description: String { path }

    package static func == (lhs: CountryDatabase, rhs: CountryDatabase) -> Bool {
        lhs.path == rhs.path && lhs.identity == rhs.identity
    }
}

extension CountryDatabase: Equatable {}

/// Why a country database cannot be opened.
package struct CountryDatabaseError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

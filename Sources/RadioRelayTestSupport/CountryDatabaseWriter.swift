import Foundation

/// Writes a MaxMind-format country database for tests with MaxMind's own writer (Debian's
/// `libmaxmind-db-writer-perl`): each network gets `country` → `iso_code`. Reserved networks (loopback, the
/// documentation ranges) are kept, so tests can give 127.0.0.x a country. Throws with the writer's output when perl
/// or the module is missing (`.ci/deps --test` installs it).
package func writeCountryDatabase(_ path: String, _ networks: [(network: String, country: String)]) throws {
    let script = path + ".pl"
    let inserts = networks.map {
        "$tree->insert_network('\($0.network)', { country => { iso_code => '\($0.country)' } });"
    }
    try """
    use strict;
    use warnings;
    use MaxMind::DB::Writer::Tree;
    my %types = (country => 'map', iso_code => 'utf8_string');
    my $tree = MaxMind::DB::Writer::Tree->new(
        ip_version => 6, record_size => 24, database_type => 'radio-relay-test-Country', languages => ['en'],
        description => { en => 'radio-relay test countries' }, map_key_type_callback => sub { $types{ $_[0] } },
        alias_ipv6_to_ipv4 => 1, remove_reserved_networks => 0);
    \(inserts.joined(separator: "\n"))
    open my $out, '>:raw', $ARGV[0] or die "cannot write $ARGV[0]: $!";
    $tree->write_tree($out);
    close $out or die "cannot write $ARGV[0]: $!";

    """.write(toFile: script, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: script) }
    guard let perl = tool("perl") else { throw ToolFailure("no perl: .ci/deps --test installs it") }
    let result = try run(perl, [script, path])
    guard result.status == 0 else {
        throw ToolFailure(
            "the country database writer failed (libmaxmind-db-writer-perl, installed by .ci/deps --test): "
                + result.stderr)
    }
}

/// A tool a test needs failed.
package struct ToolFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

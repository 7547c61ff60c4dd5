// usage: favourites DB SENSORS_CSV CERT AUTHORITY PEER
//
// Opens the replica at DB, imports the sensor registry, stars sensor 149970 and watches its sheet; then
// syncs with PEER (sealed: CERT is this replica's certificate chain from `breeze enrol`, AUTHORITY the
// cluster authority's public key file) and waits until an edit made there (un-starring the sensor) flips the star back.
import Breeze
import Foundation

@main
struct Favourites {
    static func main() async throws {
        let args = CommandLine.arguments
        guard args.count == 6 else { throw Usage() }
        let (db, sensors, cert, authority, peer) = (args[1], args[2], args[3], args[4], args[5])

        let replica = try Replica(path: db, options: .init(user: "ana"))
        defer { replica.close() }
        _ = try await replica.importFile(sensors, format: "sensors-csv")

        // The sheet of one sensor, live: the first value at once, then one after every change.
        var sheet = replica.observe(SheetScreen.self, replica.parameters(sensor: "149970")).makeAsyncIterator()
        say("star \(try await sheet.next()!.isFavourite)")            // star false

        try await replica.addFavourite("149970")
        say("star \(try await sheet.next()!.isFavourite)")            // star true

        try replica.startSync(try SyncOptions(certificateFile: cert, authorityFile: authority, peers: [peer]))
        say("syncing with \(peer)")

        // The other replica un-stars the sensor; its edit arrives through the same observer.
        while let s = try await sheet.next() {
            say("star \(s.isFavourite) (edit from the peer)")
            if !s.isFavourite { break }
        }
    }

    /// Prints a line at once (standard output is a pipe when a test runs the example, where `print` buffers).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    struct Usage: Error, CustomStringConvertible {
        var description: String { "usage: favourites DB SENSORS_CSV CERT AUTHORITY PEER" }
    }
}

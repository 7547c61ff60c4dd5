import Testing
import Breeze
import BreezeStore
import BreezeTestSupport

/// `Replica.markAlertDelivered`: a test alert shown on one device is delivered for the user's state on every
/// replica that has the event, and a bad key is refused with nothing stored.
struct AlertDeliveryTests {
    @Test func aDeliveredTestAlertIsNotShownAgainAndBadKeysAreRefused() throws {
        let dir = TempDir()
        let phone = try Replica(path: dir.file("phone.db"), options: .init(user: "ana"))
        defer { phone.close() }
        let request = try phone.requestTestAlert()
        var p = phone.parameters()
        p.now += 1
        let t = try #require(try phone.screen(AlertsScreen.self, p).testAlert)
        #expect(t.key == "test|" + request.id.description && t.shouldNotify)
        try phone.markAlertDelivered(t.key)
        #expect(try phone.screen(AlertsScreen.self, p).testAlert?.shouldNotify == false)
        #expect(try phone.state().deliveredAlerts.count == 1)
        // The tablet receives the phone's events (an export carried over, as a sync would bring them):
        // delivered there too.
        let tablet = try Replica(path: dir.file("tablet.db"), options: .init(user: "ana"))
        defer { tablet.close() }
        #expect(runBreeze(["--db", dir.file("phone.db"), "export", "--out", dir.file("phone.jsonl")]).code == 0)
        // (The phone has no certificate, so its events carry no signature: the import is told to trust them.)
        #expect(runBreeze(["--db", dir.file("tablet.db"), "import", "jsonl", dir.file("phone.jsonl"), "--trust-unsigned"]).code == 0)
        #expect(try tablet.screen(AlertsScreen.self, p).testAlert?.delivered == true)
        #expect(try tablet.state().stateHash == phone.state().stateHash)
        let count = try phone.read { try $0.eventCount() }
        for bad in ["", String(repeating: "k", count: 257), "a\u{7}b"] {
            do { try phone.markAlertDelivered(bad); Issue.record("accepted key \(bad.debugDescription)") } catch {
                #expect(BreezeError.invalidArgument ~= error && error.description.contains("alert key"))
            }
        }
        #expect(try phone.read { try $0.eventCount() } == count)
    }
}

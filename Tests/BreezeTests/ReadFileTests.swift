import Testing
import BreezeImport
import Breeze
import BreezeTestSupport

/// `Replica.readFile` (every import reads through it) stops at its cap: an endless input such as `/dev/zero`
/// used to be read until memory ran out and the import crashed.
struct ReadFileTests {
    @Test func anEndlessInputIsRefusedAtTheCapWithAnErrorNamingIt() throws {
        do {
            _ = try Replica.readFile("/dev/zero", limit: 1 << 20)
            Issue.record("/dev/zero was read whole")
        } catch {
            #expect(error.file == "/dev/zero" && error.description.contains("larger than 1048576 bytes"), "\(error)")
        }
        // A file exactly at the cap is read; the cap is 1 GiB by default.
        let dir = TempDir()
        let path = dir.file("exact.bin")
        let bytes = [UInt8](repeating: 7, count: 1 << 20)
        writeFileBytes(path, bytes)
        #expect(try Replica.readFile(path, limit: 1 << 20) == bytes)
        #expect(Replica.maxFileBytes == 1 << 30)
    }
}

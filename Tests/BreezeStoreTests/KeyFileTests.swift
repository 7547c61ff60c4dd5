import Testing
import BreezeCore
import BreezeCrypto
import BreezeTestSupport
@testable import BreezeStore
@preconcurrency import Glibc

/// Private key files beside a database (`KeyFile`): created 0600 and whole, refused when exposed, bound to
/// their replica.
struct KeyFileTests {
    @Test func aDeviceKeyIsCreatedOnceWithModeSixHundredAndReadBackTheSame() throws {
        let dir = TempDir()
        let db = dir.file("a.db"), replica = ReplicaID(rawValue: 0xABC)
        let old = umask(0)                                   // even with a permissive umask
        defer { umask(old) }
        let key = try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true)
        #expect(fileMode(db + ".key") == 0o600)
        #expect(try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true) == key)
        #expect(try KeyFile.read(db + ".key") == KeyFile.Contents(replica: replica, key: key))
        #expect(throws: KeyFileError.self) { try KeyFile.deviceKey(forDatabase: dir.file("none.db"), replica: replica, create: false) }
        // Nothing left behind but the key.
        #expect(try listDirectory(dir.path) == ["a.db.key"])
    }

    @Test func replicasCreatingTheirKeyAtOnceEndWithASingleKey() throws {
        let dir = TempDir()
        let db = dir.file("a.db"), replica = ReplicaID(rawValue: 0xABC)
        // Eight threads race to create the key (a node and CLI commands starting together).
        final class Results: @unchecked Sendable {  // written under `lock` by the threads, read after joining them
            var lock = pthread_mutex_t()
            var keys: [[UInt8]] = []
            init() { pthread_mutex_init(&lock, nil) }
        }
        let results = Results()
        var threads: [pthread_t] = []
        for _ in 0..<8 {
            var t = pthread_t()
            let box = Unmanaged.passRetained(Box { () in
                let k = (try? KeyFile.deviceKey(forDatabase: db, replica: replica, create: true))?.publicKey ?? []
                pthread_mutex_lock(&results.lock); results.keys.append(k); pthread_mutex_unlock(&results.lock)
            }).toOpaque()
            pthread_create(&t, nil, { p in Unmanaged<Box>.fromOpaque(p!).takeRetainedValue().body(); return nil }, box)
            threads.append(t)
        }
        for t in threads { pthread_join(t, nil) }
        #expect(results.keys.count == 8 && Set(results.keys).count == 1 && results.keys[0].count == 32)
        #expect(try listDirectory(dir.path) == ["a.db.key"])
    }

    @Test func anExposedAForeignOrADamagedKeyFileIsRefused() throws {
        let dir = TempDir()
        let db = dir.file("a.db"), replica = ReplicaID(rawValue: 0xABC)
        _ = try KeyFile.deviceKey(forDatabase: db, replica: replica, create: true)
        for m: mode_t in [0o640, 0o604, 0o644, 0o660] {
            chmod(db + ".key", m)
            #expect(throws: KeyFileError.self, "mode \(String(m, radix: 8))") { try KeyFile.read(db + ".key") }
        }
        chmod(db + ".key", 0o400)
        #expect((try? KeyFile.read(db + ".key")) != nil, "read-only for the owner is fine")
        chmod(db + ".key", 0o600)
        // The key of another replica: the database was replaced under it.
        #expect(throws: KeyFileError.self) { try KeyFile.deviceKey(forDatabase: db, replica: ReplicaID(rawValue: 0xDEF), create: true) }
        // Damaged contents.
        for text in ["", "ed25519-seed 1234\n", "replica zz\ned25519-seed \(String(repeating: "00", count: 32))\n", "hello world\n"] {
            let p = dir.file("bad.key")
            unlink(p)
            let fd = open(p, O_CREAT | O_WRONLY, 0o600)
            _ = text.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            #expect(throws: KeyFileError.self, "\(text)") { try KeyFile.read(p) }
        }
        // A well-formed file whose seed is 32 identical bytes (all zero, say) is refused by name, while the same
        // layout with a real seed reads.
        for (seed, ok) in [(String(repeating: "00", count: 32), false), (String(repeating: "ab", count: 32), false),
                           (Digest.hex(Ed25519.KeyPair.generate().seed), true)] {
            let p = dir.file("seed.key")
            unlink(p)
            let fd = open(p, O_CREAT | O_WRONLY, 0o600)
            let text = "replica \(replica)\ned25519-seed \(seed)\n"
            _ = text.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            do {
                _ = try KeyFile.read(p)
                #expect(ok, "seed \(seed) was accepted")
            } catch {
                #expect(!ok && error.description.contains("identical bytes"), "\(error)")
            }
        }
        // An existing file is never replaced.
        #expect(try KeyFile.create(db + ".key", KeyFile.Contents(replica: replica, key: .generate()), comment: "x") == false)
    }
}

final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

func listDirectory(_ path: String) throws -> [String] {
    guard let d = opendir(path) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafePointer(to: e.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

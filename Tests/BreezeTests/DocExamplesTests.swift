import Testing
import BreezeTestSupport
@preconcurrency import Glibc

/// The examples in the doc comments of the `Breeze` module compile: `tools/doc-examples.sh` writes each
/// ```swift block of Sources/Breeze/*.swift as a function of `Examples/Favourites/Sources/DocExamples`, which
/// `tools/test.sh` builds with warnings as errors. These check that the written file is current (a doc comment
/// edited without regenerating fails here) and holds every example (a generator that drops one fails here).
struct DocExamplesTests {
    /// The repository (this file is Tests/BreezeTests/DocExamplesTests.swift in it).
    static var root: String {
        var dir = #filePath
        for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir
    }
    static let generated = "Examples/Favourites/Sources/DocExamples/DocExamples.swift"

    static func lines(_ path: String) -> [Substring] {
        String(decoding: readFileBytes(path), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// The `/// ```swift` lines of the module's sources, counted here rather than by the script.
    static func exampleBlocks() -> [String] {
        let dir = root + "/Sources/Breeze"
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var blocks: [String] = []
        while let e = readdir(d) {
            let name = withUnsafePointer(to: e.pointee.d_name) { $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) } }
            guard name.hasSuffix(".swift") else { continue }
            for (i, line) in lines(dir + "/" + name).enumerated() {
                let text = line.drop(while: { $0 == " " || $0 == "\t" })
                if text.hasPrefix("///"), text.dropFirst(3).filter({ $0 != " " && $0 != "\t" && $0 != "\r" }) == "```swift" {
                    blocks.append("\(name):\(i + 1)")
                }
            }
        }
        return blocks
    }

    @Test func theGeneratedDocExamplesAreCurrent() {
        let r = runProgramWithErrors("/bin/bash", [Self.root + "/tools/doc-examples.sh", "--check"])
        #expect(r.code == 0, "`bash tools/doc-examples.sh --check` exited \(r.code):\n\(r.err)")
    }

    @Test func everyDocExampleIsAFunction() {
        let blocks = Self.exampleBlocks()
        let functions = Self.lines(Self.root + "/" + Self.generated).filter { $0.hasPrefix("func ") }.count
        #expect(!blocks.isEmpty, "no ```swift blocks found in the doc comments of Sources/Breeze")
        #expect(functions >= blocks.count,
                "\(Self.generated) has \(functions) functions for \(blocks.count) ```swift blocks (their opening lines): \(blocks.sorted())")
    }
}


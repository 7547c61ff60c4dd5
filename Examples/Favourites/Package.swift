// swift-tools-version:6.0
//
// An app's use of Breeze in a few lines: open a replica, star a sensor, watch the sheet's star flip, sync
// with another replica and see its edit arrive through the same observer. It depends on this repository by
// path, as an app in the same checkout would; `Tests/BreezeTests/ExampleTests.swift` builds and runs it.
// `ViewModels.swift` is what a SwiftUI app writes over it (an `@Observable` view model, `Identifiable` lists).
import PackageDescription

let package = Package(
    name: "Favourites",
    dependencies: [.package(name: "Breeze", path: "../..")],
    targets: [
        .executableTarget(name: "favourites", dependencies: [.product(name: "Breeze", package: "Breeze")],
                          // Warnings are errors: an app's first build over `import Breeze` must be clean.
                          swiftSettings: [.swiftLanguageMode(.v6), .unsafeFlags(["-warnings-as-errors"])]),
    ]
)

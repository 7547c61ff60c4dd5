// swift-tools-version:6.0
//
// An app's use of Breeze in a few lines: open a replica, star a sensor, watch the sheet's star flip, sync
// with another replica and see its edit arrive through the same observer. It depends on this repository by
// path, as an app in the same checkout would; `Tests/BreezeTests/ExampleTests.swift` builds and runs it.
import PackageDescription

let package = Package(
    name: "Favourites",
    dependencies: [.package(name: "Breeze", path: "../..")],
    targets: [
        .executableTarget(name: "favourites", dependencies: [.product(name: "Breeze", package: "Breeze")],
                          swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)

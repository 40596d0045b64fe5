// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A downstream app's package: its own scenarios (scenarios/), its own schema and its own sync
// policy, tested with conflict-sim's SimTesting from Swift Testing and XCTest. It depends on the
// clone it sits in; a real app writes
//   .package(url: "https://github.com/conflict-sim/conflict-sim.git", from: "0.2.0")
// and `package: "conflict-sim"`. (A path dependency is named after its folder, which here is
// whatever the clone is called.)
let clone = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
  name: "NotesApp",
  platforms: [.macOS(.v13), .iOS(.v16)],
  dependencies: [.package(path: clone.path)],
  targets: [
    .testTarget(name: "NotesAppTests", dependencies: [.product(name: "SimTesting", package: clone.lastPathComponent)])
  ]
)

// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A downstream app's package that runs its own sync code — a delegate of SimSyncEngine's
// CKSyncEngine-shaped engine — under the simulator: tests with SimTesting, and a command-line
// tool of its own (sim-cli with its apps registered). The app here is the library's reference
// NotesApp and one of its planted-bug variants; yours goes in their place. It depends on the clone
// it sits in; a real app writes
//   .package(url: "https://github.com/conflict-sim/conflict-sim.git", from: "0.2.0")
// and `package: "conflict-sim"`.
let clone = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let sim = clone.lastPathComponent

let package = Package(
  name: "NotesSync",
  platforms: [.macOS(.v13), .iOS(.v16)],
  dependencies: [.package(path: clone.path)],
  targets: [
    .executableTarget(
      name: "notes-sim",
      dependencies: [
        .product(name: "SimCLI", package: sim), .product(name: "SimSyncEngine", package: sim), .product(name: "Scenarios", package: sim),
      ]),
    .testTarget(
      name: "NotesSyncTests",
      dependencies: [.product(name: "SimSyncEngine", package: sim), .product(name: "SimTesting", package: sim)]),
  ]
)

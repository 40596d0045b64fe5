// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "conflict-sim",
  // Apple platforms with Swift 6's concurrency runtime, ContinuousClock and Swift Testing; Linux
  // needs no entry.
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
  products: [
    .library(name: "Simulator", targets: ["Simulator"]),
    .library(name: "Replica", targets: ["Replica"]),
    .library(name: "Scenarios", targets: ["Scenarios"]),
    .library(name: "ModelImport", targets: ["ModelImport"]),
    // A sync engine shaped like CKSyncEngine, for running the user's own delegate in the simulator.
    .library(name: "SimSyncEngine", targets: ["SimSyncEngine"]),
    // Test helpers for XCTest and Swift Testing; only test targets link it, never the CLI.
    .library(name: "SimTesting", targets: ["SimTesting"]),
    // The command-line tool as a library: a tool of your own registers your apps
    // (`SimCLI.runAsProcess(arguments:apps:)`).
    .library(name: "SimCLI", targets: ["SimCLI"]),
    .executable(name: "sim-cli", targets: ["sim-cli"]),
  ],
  targets: [
    .target(name: "Simulator"),
    // Reads the user's SwiftData `@Model` sources and Core Data models into a scenario schema,
    // with CloudKit-compatibility findings; depends on nothing.
    .target(name: "ModelImport"),
    .target(name: "SimSyncEngine", dependencies: ["Simulator", "Replica", "Scenarios"]),
    .target(name: "Replica", dependencies: ["Simulator"]),
    // The named scenarios (`scenarios/`, linked in as Resources/scenarios) are embedded in the
    // library, so that loading one by name needs no file next to the binary.
    .target(name: "Scenarios", dependencies: ["Simulator", "Replica", "ModelImport"], resources: [.embedInCode("Resources/scenarios")]),
    // An independent, brute-force re-judging of a run from its raw observations (selftest
    // --oracles); shares no judging code with the oracle in Scenarios.
    .target(name: "ReferenceOracle", dependencies: ["Simulator", "Replica"]),
    // The command-line tool's logic, as a library so that tests can drive it in-process.
    .target(name: "SimCLI", dependencies: ["Simulator", "Replica", "Scenarios", "ReferenceOracle", "ModelImport"]),
    .executableTarget(name: "sim-cli", dependencies: ["SimCLI", "Scenarios", "SimSyncEngine"]),
    .target(name: "SimTesting", dependencies: ["Scenarios", "Replica", "Simulator", "SimSyncEngine"]),
    .testTarget(name: "SimulatorTests", dependencies: ["Simulator"]),
    .testTarget(name: "SimSyncEngineTests", dependencies: ["SimSyncEngine", "Replica", "Simulator", "Scenarios", "SimTesting", "ReferenceOracle"]),
    // The corpus of model files is read by path (#filePath), not bundled.
    .testTarget(name: "ModelImportTests", dependencies: ["ModelImport"], exclude: ["Corpus"]),
    .testTarget(name: "ReplicaTests", dependencies: ["Replica", "Simulator"]),
    // Golden files are read by path (#filePath), not bundled: excluded so SwiftPM does not ask.
    .testTarget(name: "ScenariosTests", dependencies: ["Scenarios", "Replica", "Simulator", "ModelImport"], exclude: ["Golden"]),
    .testTarget(name: "SimTestingTests", dependencies: ["SimTesting", "Scenarios", "Replica", "Simulator"]),
    // Depends on the executable too, so that `swift test` builds the binary the tests spawn. Its
    // data files are read by path (#filePath), not bundled.
    .testTarget(name: "SimCLITests", dependencies: ["SimCLI", "Simulator", "ReferenceOracle", "sim-cli"], exclude: ["Data"]),
  ],
  swiftLanguageModes: [.v6]
)

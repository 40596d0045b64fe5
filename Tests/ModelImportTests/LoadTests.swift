import Foundation
import ModelImport
import XCTest

/// Loading from disk, errors, and hostile input.
final class LoadTests: XCTestCase {
  func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("model-import-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
  }

  func testLoadsADirectoryOfSwiftFilesInSortedOrder() throws {
    let path = corpus.appendingPathComponent("TripPlanner").path
    let model = try ModelImporter.load(path: path)
    XCTAssertEqual(model.source, .swiftData)
    XCTAssertEqual(model.origin, path)
    XCTAssertEqual(model.types.map(\.name), ["Place", "Trip", "Leg"])
    XCTAssertEqual(model.types[0].location.file, path + "/Place.swift")
  }

  func testLoadsAnXcdatamodeldWithTheCurrentVersionLast() throws {
    let path = corpus.appendingPathComponent("Inventory.xcdatamodeld").path
    let model = try ModelImporter.load(path: path)
    XCTAssertEqual(model.source, .coreData)
    XCTAssertEqual(model.versions, ["Inventory", "Inventory 2"])
    XCTAssertEqual(model.types.map(\.name), ["Warehouse", "Shelf", "Item", "Tag", "Person"])
    let single = try ModelImporter.load(path: path + "/Inventory.xcdatamodel/contents")
    XCTAssertEqual(single.types.map(\.name), ["Warehouse", "Shelf"])
  }

  func testNaturalOrderAndCurrentVersion() throws {
    let dir = try temporaryDirectory().appendingPathComponent("M.xcdatamodeld")
    for (name, entity) in [("M 10", "Ten"), ("M 2", "Two"), ("M 9", "Nine")] {
      let version = dir.appendingPathComponent("\(name).xcdatamodel")
      try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
      try "<model><entity name=\"\(entity)\"/></model>".write(to: version.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
    }
    XCTAssertEqual(try ModelImporter.load(path: dir.path).versions, ["M 2", "M 9", "M 10"])
    let plist = "<plist><dict><key>_XCCurrentVersionName</key><string>M 9.xcdatamodel</string></dict></plist>"
    try plist.write(to: dir.appendingPathComponent(".xccurrentversion"), atomically: true, encoding: .utf8)
    let model = try ModelImporter.load(path: dir.path)
    XCTAssertEqual(model.versions, ["M 2", "M 10", "M 9"])
    XCTAssertEqual(model.types.map(\.name), ["Nine"])
  }

  func testErrors() throws {
    let dir = try temporaryDirectory()
    XCTAssertThrowsError(try ModelImporter.load(path: dir.path + "/missing")) { error in
      XCTAssertEqual((error as? ImportError)?.reason, .notFound)
    }
    try "struct NotAModel {}\n".write(to: dir.appendingPathComponent("a.swift"), atomically: true, encoding: .utf8)
    XCTAssertThrowsError(try ModelImporter.load(path: dir.path)) { error in
      XCTAssertEqual((error as? ImportError)?.description, "no @Model class and no Core Data model in \(dir.path)")
    }
    let bad = dir.appendingPathComponent("contents")
    try "<model>\n  <entity name=\"A\">\n</model>\n".write(to: bad, atomically: true, encoding: .utf8)
    XCTAssertThrowsError(try ModelImporter.load(path: bad.path)) { error in
      XCTAssertEqual((error as? ImportError)?.description, "\(bad.path):3:1: error: end tag </model> does not match <entity>")
    }
    let big = dir.appendingPathComponent("big.swift")
    try Data(count: ModelImporter.maximumFileSize + 1).write(to: big)
    XCTAssertThrowsError(try ModelImporter.load(path: big.path)) { error in
      XCTAssertEqual((error as? ImportError)?.reason, .tooLarge)
    }
  }

  func testGarbageNeverCrashes() {
    var generator = SplitMix(seed: 42)
    let fragments = [
      "@Model", "class", "final", "var", "let", ":", "=", "{", "}", "(", ")", "[", "]", "\"", "\"\"\"", "/*", "*/", "//", "\n", "#", "\\", "?",
      "@Relationship(deleteRule: .cascade, inverse: \\X.y)", "String", "[X]", "X", "enum V: VersionedSchema {", "<", ">", "#Unique<X>([\\.a",
    ]
    for _ in 0..<200 {
      var text = ""
      for _ in 0..<Int(generator.next() % 80) { text += fragments[Int(generator.next() % UInt64(fragments.count))] + " " }
      _ = ModelImporter.parseSwiftData([("g.swift", text)]).scenarioSchema()
      _ = ModelImporter.parseCoreData([("g", "g", "<model><entity name=\"A\">" + text)]).scenarioSchema()
    }
    var bytes = [UInt8]()
    for _ in 0..<20_000 { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
    let binary = String(decoding: bytes, as: UTF8.self)
    _ = ModelImporter.parseSwiftData([("b.swift", binary)])
    _ = ModelImporter.parseCoreData([("b", "b", binary)])
    let deep = String(repeating: "enum E {", count: 5_000) + "@Model class M { var x: String = \"\" }"
    XCTAssertEqual(ModelImporter.parseSwiftData([("d.swift", deep)]).types.count, 0)
    let deepXML = String(repeating: "<a>", count: 5_000)
    let xml = ModelImporter.parseCoreData([("d", "d", deepXML)])
    XCTAssertEqual(xml.findings.map(\.rule), ["unreadable-source"])
    let unterminated = ModelImporter.parseSwiftData([("u.swift", "@Model class A {\n  var s: String = \"open\n  /* never closed\n")])
    XCTAssertEqual(
      findingKeys(unterminated), ["default-approximated u.swift:2:3", "unreadable-source u.swift:2:19", "unreadable-source u.swift:3:3"])
  }
}

/// A small deterministic generator for the garbage test.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

import Foundation
import ModelImport
import XCTest

final class DumpTests: XCTestCase {
  func testDump() throws {
    let models = [
      ModelImporter.parseSwiftData(try corpusSources("TripPlanner/Place.swift", "TripPlanner/Trip.swift")),
      ModelImporter.parseSwiftData(try corpusSources("Versioned/NotesSchema.swift")),
      ModelImporter.parseSwiftData(try corpusSources("Clean/Recipes.swift")),
      ModelImporter.parseCoreData(try inventoryVersions()),
      ModelImporter.parseSwiftData(try corpusSources("Unreadable/Odd.swift")),
    ]
    for m in models {
      print("=====")
      print(m.scenarioSchema())
      for f in m.findings { print(f.rendered(), terminator: "") }
    }
  }
}

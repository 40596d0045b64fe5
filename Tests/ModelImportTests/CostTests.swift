import Foundation
import ModelImport
import XCTest

/// Inputs whose cost grew faster than their size (issue 28, item 5): a Core Data parentEntity
/// chain (each entity holds a copy of every ancestor's attributes), a Swift type with a long run
/// of `?`, a default value with a long run of trailing spaces.
final class CostTests: XCTestCase {
  /// A model of `count` entities `E0`…, each the parent of the next; entity `i` has the
  /// attribute `a<i>` when `attributes` (entity `i` is on line `i + 3`).
  func chain(_ count: Int, attributes: Bool = true, abstract: Set<Int> = [], unique: Set<Int> = []) -> String {
    var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type=\"com.apple.IDECoreDataModeler.DataModel\">\n"
    for i in 0..<count {
      xml += "<entity name=\"E\(i)\"\(i > 0 ? " parentEntity=\"E\(i - 1)\"" : "")\(abstract.contains(i) ? " isAbstract=\"YES\"" : "")>"
      if attributes { xml += "<attribute name=\"a\(i)\" optional=\"YES\" attributeType=\"String\"/>" }
      if unique.contains(i) {
        xml += "<uniquenessConstraints><uniquenessConstraint><constraint value=\"a\(i)\"/></uniquenessConstraint></uniquenessConstraints>"
      }
      xml += "</entity>\n"
    }
    return xml + "</model>\n"
  }

  /// 500 entities in a chain would inherit 124,750 attributes (E499 holds 500); it took 1.7 s,
  /// and 2,000 took 77 s and 684 MB. Each entity now keeps the first 256 it inherits (the
  /// farthest parents' first; a type holds 64 fields) and is told how many there were: the
  /// model is read, in proportion to entities × 256.
  func testADeepChainKeepsTheFirstInheritedFieldsAndSaysHowManyThereWere() throws {
    let model = ModelImporter.parseCoreData([("M", "M/contents", chain(500))])
    XCTAssertEqual(model.types.count, 500)
    XCTAssertEqual(model.types[499].fields.map(\.name), (0..<64).map { "a\($0)" })
    let truncated = model.findings.filter { $0.rule == "too-many-fields" && $0.message.contains("only the first 256") }
    XCTAssertEqual(truncated.count, 500 - 257)  // E257 inherits 257
    XCTAssertEqual(
      truncated.last?.message,
      "E499 inherits 499 attributes and relationships from 499 parent entities; a scenario type holds at most 64 fields, so only the first 256 (the farthest parents' first) are read."
    )
    // The fields a type drops are named, 20 at most, then counted.
    let dropped = model.findings.first { $0.rule == "too-many-fields" && $0.message.hasPrefix("E499 has") }
    XCTAssertEqual(
      dropped?.message,
      "E499 has 257 fields; a scenario type holds at most 64, so \((64..<84).map { "a\($0)" }.joined(separator: ", ")) and 173 more are left out.")
  }

  /// Under the cap the chain is flattened as it always was: the farthest ancestor's fields
  /// first, an abstract entity's copied into its children, constraints inherited.
  func testAChainUnderTheCapIsFlattenedParentFirst() {
    let model = ModelImporter.parseCoreData([("M", "M/contents", chain(200, abstract: [1], unique: [0]))])
    XCTAssertEqual(model.types.count, 199)
    XCTAssertEqual(model.types.map(\.name).prefix(3), ["E0", "E2", "E3"])
    XCTAssertEqual(model.types[1].fields.map(\.name), ["a0", "a1", "a2"])
    XCTAssertEqual(model.types.map(\.fields.count), [1] + (2..<200).map { min($0 + 1, 64) })
    XCTAssertEqual(model.types[198].fields.map(\.name), (0..<64).map { "a\($0)" })
    XCTAssertEqual(Set(model.types.map(\.uniqueBy)), [["a0"]])
    XCTAssertEqual(model.findings.filter { $0.rule == "too-many-fields" }.count, (64..<200).count)
    XCTAssertEqual(model.findings.filter { $0.rule == "inheritance-flattened" }.count, 198)
  }

  /// A chain with nothing to inherit copies nothing, however long: 5,000 entities are read.
  func testADeepChainWithNothingToInheritIsRead() {
    let model = ModelImporter.parseCoreData([("M", "M/contents", chain(5_000, attributes: false))])
    XCTAssertEqual(model.types.count, 5_000)
    XCTAssertEqual(model.types.last?.name, "E4999")
    XCTAssertEqual(model.findings, [])
  }

  /// Entities that are not the first of their name, or whose parents loop, walk their chains
  /// as written: a loop stops where a name comes back, a missing parent ends the chain.
  func testLoopsDuplicatesAndMissingParents() {
    let xml = """
      <model>
        <entity name="A" parentEntity="B"><attribute name="a" optional="YES" attributeType="String"/></entity>
        <entity name="B" parentEntity="A"><attribute name="b" optional="YES" attributeType="String"/></entity>
        <entity name="C" parentEntity="A"><attribute name="c" optional="YES" attributeType="String"/></entity>
        <entity name="D" parentEntity="F"><attribute name="d" optional="YES" attributeType="String"/></entity>
        <entity name="F" parentEntity="G"><attribute name="f" optional="YES" attributeType="String"/></entity>
        <entity name="H" parentEntity="D"><attribute name="h" optional="YES" attributeType="String"/></entity>
        <entity name="D" parentEntity="H"><attribute name="d2" optional="YES" attributeType="String"/></entity>
      </model>
      """
    let model = ModelImporter.parseCoreData([("M", "M/contents", xml)])
    XCTAssertEqual(model.types.map(\.name), ["A", "B", "C", "D", "F", "H"])
    XCTAssertEqual(model.types.map { $0.fields.map(\.name) }, [["b", "a"], ["a", "b"], ["b", "a", "c"], ["f", "d"], ["f"], ["f", "d", "h"]])
    XCTAssertEqual(
      model.findings.filter { $0.rule == "unreadable-source" }.map(\.message),
      [
        "The parent entity G of D is not in the model; nothing is inherited.",
        "The parent entity G of F is not in the model; nothing is inherited.",
        "The parent entity G of H is not in the model; nothing is inherited.",
      ])
  }

  /// 100,000 `?` took 25 s: each was cut from the end of the type's text one at a time, and
  /// each cut cost the length of the text. The output was right; it is the same now.
  func testAHundredThousandQuestionMarksMakeOneOptional() {
    let text =
      "import SwiftData\n@Model final class T {\n  var t: Int" + String(repeating: "?", count: 100_000) + " = nil\n  var u: String"
      + String(repeating: "!?", count: 50_000) + "\n  init() {}\n}\n"
    let model = ModelImporter.parseSwiftData([("q.swift", text)])
    XCTAssertEqual(model.types.map(\.name), ["T"])
    XCTAssertEqual(model.types[0].fields.map(\.name), ["t", "u"])
    XCTAssertEqual(model.types[0].fields.map(\.kind), [.int, .string])
    XCTAssertEqual(model.types[0].fields.map(\.optional), [true, true])
    XCTAssertEqual(model.findings, [])
  }

  /// A default's trailing spaces were cut one at a time the same way (50,000 took 6 s).
  func testAHundredThousandTrailingSpacesOfADefault() {
    let xml =
      "<model><entity name=\"A\"><attribute name=\"n\" optional=\"YES\" attributeType=\"Integer 32\" defaultValueString=\" 7"
      + String(repeating: " ", count: 100_000) + "\"/></entity></model>"
    let model = ModelImporter.parseCoreData([("M", "M/contents", xml)])
    XCTAssertEqual(model.types.first?.fields.first?.defaultLiteral, "7")
    XCTAssertEqual(model.findings, [])
  }
}

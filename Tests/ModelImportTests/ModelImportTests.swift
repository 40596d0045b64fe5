import ModelImport
import XCTest

final class ModelImportTests: XCTestCase {
  func testPlaceholder() {}
}

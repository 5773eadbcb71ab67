import Foundation
import Testing

@testable import TetherStore

/// What an app shows of a store error.
struct StoreErrorTextTests {
    @Test func theLocalizedDescriptionIsTheMessageAndTheFile() {
        let error = StoreError(code: .io, message: "cannot create directory", url: URL(fileURLWithPath: "/x/y"))
        #expect(error.localizedDescription == "cannot create directory (/x/y)")
        #expect(StoreError(code: .notFound, message: "no such record").localizedDescription == "no such record")
        #expect(error.description == "StoreError(io): cannot create directory (/x/y)")
    }
}

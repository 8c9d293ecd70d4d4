#if Postgres
import Foundation
import PostgresNIO

extension PostgresStoreError {
    /// The typed error for what postgres-nio or SwiftNIO threw.
    init(_ error: any Error) {
        if let error = error as? PostgresStoreError {
            self = error
            return
        }
        guard let error = error as? PSQLError else {
            // SwiftNIO's connect and channel errors: the server is not there or the connection broke.
            self = .connectionLost(reason: String(describing: error))
            return
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? "XX000"
            let message = error.serverInfo?[.message] ?? "\(error)"
            let detail = error.serverInfo?[.detail] ?? ""
            switch state {
            case "40001", "40P01":
                self = .serializationFailure(attempts: 1, message: message)
            case "23505", "23P01":
                self = .uniquenessViolation(
                    constraint: error.serverInfo?[.constraintName] ?? "", detail: detail.isEmpty ? message : detail)
            case _ where state.hasPrefix("08") || state.hasPrefix("57P"):
                // Connection exceptions; admin_shutdown, crash_shutdown, cannot_connect_now.
                self = .connectionLost(reason: "\(message) (SQLSTATE \(state))")
            default:
                self = .server(sqlState: state, message: detail.isEmpty ? message : "\(message): \(detail)")
            }
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown, .queryCancelled,
            .messageDecodingFailure, .unexpectedBackendMessage:
            self = .connectionLost(reason: String(describing: error.code))
        default:
            self = .server(sqlState: "", message: String(reflecting: error))
        }
    }
}
#endif

/**
 * Upstream: tulios/kafkajs#1058 (a TLS failure surfaces as a retried KafkaJSConnectionError,
 * "Connection error: …SSL routines…", wrapped in KafkaJSNumberOfRetriesExceeded) and
 * tulios/kafkajs#1550 (a SASL exchange that times out). Applies to kafkajs 2.2.4.
 *
 * The message-text fallbacks of `classify` (errorTypes.ts), for the failures whose kafkajs
 * 2.2.4 error carries no class, `type` or `code` that says what they are: a TLS failure without
 * Node's code on it (a handshake cut short, an alert), a SASL failure that reaches the caller
 * as another error with "SASL" in its message (a SaslAuthenticate request that timed out, a
 * wrapper without the cause's name), and connection failures that are not kafkajs errors at
 * all (ECONNREFUSED, ENOTFOUND). A new kafkajs version may word them otherwise: these are the
 * first things to re-check on an upgrade.
 */

/** Node's TLS verification failures, as they appear in kafkajs' "Connection error: …" messages. */
export const TLS_FAILURE_TEXT =
  /certificate|self[- ]signed|unable to verify|unable to get (local )?issuer|hostname\/IP does not match|altnames|ERR_TLS|SSL routines|wrong version number|handshake|alert/i;

/** A SASL exchange that failed, in the messages of an error's chain. */
export const SASL_FAILURE_TEXT = /SASL|authenticat/i;

/** A broker that could not be connected to, in an error's own message. */
export const CONNECTION_FAILURE_TEXT = /ECONNREFUSED|ENOTFOUND|Connection error/;

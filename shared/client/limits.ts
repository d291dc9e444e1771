// Limits the clients and the agent's guide share, with no dependency (the guide is built on the host,
// where the MCP SDK is not loaded).

/** How long `dw mcp` waits for a call without a progress token: well under the MCP TypeScript SDK's 60 s
 *  default request timeout, so a call returns (with the request id) before its client gives up on it
 *  and loses the id. */
export const DEFAULT_WAIT_S = 45;

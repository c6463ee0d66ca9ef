// What the page agent needs from dom-accessibility-api: the accessible name (W3C accname) and role.
export { computeAccessibleName, getRole } from "dom-accessibility-api";

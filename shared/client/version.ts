// The app's version in the sandbox clients. esbuild inlines this one field of package.json into dw.cjs
// when it builds the bundle (its other fields are left out); run from source, it is read from the file.
export { version as APP_VERSION } from '../../package.json';

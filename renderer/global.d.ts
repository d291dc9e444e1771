import type { DumbwaiterApi } from '../preload/api';

declare global {
  interface Window {
    dumbwaiter: DumbwaiterApi;
  }
}

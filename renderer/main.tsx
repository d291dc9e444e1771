// The main window's entry point.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { reportErrors } from './lib/reportErrors';
import './styles/theme.css';
import './styles/components.css';
import './styles/shell.css';

reportErrors();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

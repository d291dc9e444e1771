// The approval window's entry point (placeholder until the approvals screen lands).
import { createRoot } from 'react-dom/client';
import './styles/theme.css';
import './styles/components.css';

createRoot(document.getElementById('root')!).render(<p>Loading…</p>);
